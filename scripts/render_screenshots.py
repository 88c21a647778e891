"""Renders every tab of the desktop app, working on the demo model, to PNG files.

Run it under a virtual X display so the pictures are what a desktop shows:

    xvfb-run -a -s "-screen 0 1400x1000x24" python scripts/render_screenshots.py

(`QT_QPA_PLATFORM=offscreen` also works, with the offscreen platform's fonts.) The
app does real work for each picture: "Masked words" predicts the masks of its example,
the attention views show every head of a layer, the head view's lines and every layer
and head (for a sentence pair, how the first sentence attends to the second), the QA tab
answers a question about a passage of Pride and Prejudice, the fine-tuning tab
fine-tunes the demo model for a few epochs on a tiny labelled file, and "Classify &
tag" then classifies a new sentence with the model just trained and shows which words
made its label ("Why?", occlusion; before that, "Predictions…" shows that run's
evaluation rows and confusion matrix); last, the demo model is fine-tuned for multiple
choice on a tiny SWAG-format file and "Classify & tag" picks
the ending of a new context; then two runs trained from the Fine-tuning tab fill the Runs
view and the evaluation browser compares their models (its embedding map, an edited
example), and a second window opens on the bundled `demo-spam` as the app does out of the
box (`screenshot_runs_and_browser.py`). ONLY_FINE_TUNING=1, ONLY_MULTIPLE_CHOICE=1,
ONLY_RUNS=1 or ONLY_CLASSIFY_DEMO_SPAM=1 renders that part alone.
"""

import argparse
import os
import pathlib
import sys
import tempfile
import time

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "scripts"))

from screenshot_runs_and_browser import classify_out_of_the_box  # noqa: E402
from screenshot_runs_and_browser import runs_and_evaluation  # noqa: E402

# Set one of these (=1) to render only that part of the pictures.
ONLY = ("ONLY_FINE_TUNING", "ONLY_MULTIPLE_CHOICE", "ONLY_RUNS", "ONLY_CLASSIFY_DEMO_SPAM")

PAIR_TEXT = "The cat sat on the mat. [SEP] It was warm in the sun."

PASSAGE = (
    "Mr. Bennet was so odd a mixture of quick parts, sarcastic humour, reserve, and "
    "caprice, that the experience of three-and-twenty years had been insufficient to make "
    "his wife understand his character. Her mind was less difficult to develop. She was a "
    "woman of mean understanding, little information, and uncertain temper. The business "
    "of her life was to get her daughters married; its solace was visiting and news."
)
QUESTION = "What was the business of her life?"
# A tiny file for the fine-tuning picture: is the sentence about a ball or a letter?
TRAINING_ROWS = [
    ("She danced every dance at the ball.", "ball"),
    ("The music began and the couples took their places.", "ball"),
    ("He asked her for the next two dances.", "ball"),
    ("The ballroom was crowded and warm.", "ball"),
    ("They danced together until supper.", "ball"),
    ("The officers were all at the assembly.", "ball"),
    ("She read the letter twice over.", "letter"),
    ("He sealed the letter and gave it to the servant.", "letter"),
    ("Her sister wrote to her from London.", "letter"),
    ("The letter arrived by the morning post.", "letter"),
    ("She could not answer his letter at once.", "letter"),
    ("He wrote a long reply that evening.", "letter"),
]

# A small SWAG-format file for the multiple-choice picture, built from one rule: a context
# about music is continued by dancing, one about letters by reading or writing, one about
# the night by going to bed. Each row: (sent1, sent2, label, endings).
_CHOICE_TOPICS = {
    "music": (
        ["The music began.", "The band struck up a reel.", "The fiddler began to play.",
         "The ball opened with a dance.", "The couples took their places.",
         "The music grew louder."],
        ["danced a reel.", "danced with him.", "danced all night.", "danced till dawn.",
         "danced the first dance.", "danced again."],
    ),
    "letter": (
        ["The letter arrived.", "The post came early.", "Her sister wrote from London.",
         "A note was brought in.", "The letter lay on the table.", "A letter came for him."],
        ["read the letter.", "read it twice.", "wrote a reply.", "read it aloud.",
         "wrote back at once.", "read every word."],
    ),
    "night": (
        ["It was very late.", "The candles burned low.", "Everyone was tired.",
         "The clock struck midnight.", "The house grew quiet.", "Night had fallen."],
        ["went to bed.", "went to sleep.", "went up to bed.", "slept soundly.",
         "went to bed early.", "fell asleep."],
    ),
}
CHOICE_ROWS = [
    (
        contexts[row],
        "They",
        row % 3,
        tuple(
            # The right ending at position row % 3, the other topics' at the others.
            endings_of[(row + column) % 6]
            for column, endings_of in enumerate(
                [_CHOICE_TOPICS[other][1] for other in _CHOICE_TOPICS if other != topic][: (row % 3)]
                + [_CHOICE_TOPICS[topic][1]]
                + [_CHOICE_TOPICS[other][1] for other in _CHOICE_TOPICS if other != topic][(row % 3):]
            )
        ),
    )
    for topic, (contexts, _) in _CHOICE_TOPICS.items()
    for row in range(6)
]
CHOICE_CONTEXT = "The music began again."
CHOICE_ENDINGS = ["They danced a reel.", "They read the letter.", "They went to bed."]


def wait_until(app, predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"Timed out after {timeout_s} s waiting for {what}.")
        app.processEvents()
        time.sleep(0.02)


def settle(app, seconds=0.5):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.02)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(REPOSITORY / "assets" / "screenshots"))
    parser.add_argument("--model", default="demo")
    args = parser.parse_args(argv)
    os.environ.setdefault("KERAS_BACKEND", "jax")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

    from PySide6.QtWidgets import QApplication

    from kbert_gui.app import create_window

    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("kbert")
    app.setOrganizationName("kbert")
    window = create_window(args.model)
    window.resize(1280, 820)
    window.show()
    context = window.context
    context.load_environment()
    wait_until(app, lambda: context.environment is not None, 120, "Keras to load")

    def save(name):
        settle(app)
        path = output / f"{name}.png"
        window.grab().save(str(path))
        print(f"wrote {path}")

    save.folder = output

    only = [name for name in ONLY if os.environ.get(name)]
    if not only:
        _masked_words_and_qa(app, window, save)
        _attention_model_view(app, window, save)
    if not only or "ONLY_FINE_TUNING" in only:
        _fine_tuning(app, window, save)
        window.context.models.set_source(args.model)
    if not only or "ONLY_MULTIPLE_CHOICE" in only:
        _multiple_choice(app, window, save)
        window.context.models.set_source(args.model)
    if not only or "ONLY_RUNS" in only:
        runs_and_evaluation(app, window, output, TRAINING_ROWS, _train, wait_until, settle)
    window.close()
    if not only or "ONLY_CLASSIFY_DEMO_SPAM" in only:
        classify_out_of_the_box(app, output, wait_until, settle)
    return 0


def _masked_words_and_qa(app, window, save):
    from kbert_gui.masked_words.attention_panel import ALL_HEADS
    from kbert_gui.masked_words.attention_panel import HEAD_VIEW
    from kbert_gui.masked_words.attention_panel import HEAT_MAP
    from kbert_gui.tab_key import TabKey

    window.show_tab(TabKey.MASKED_WORDS)
    masked_words = window.tab(TabKey.MASKED_WORDS)
    wait_until(app, lambda: masked_words.predictions_view.mask_count() > 0, 120, "predictions")
    save("masked-words")
    masked_words.output_tabs.setCurrentIndex(1)
    attention = masked_words.attention_panel
    wait_until(app, lambda: attention.attention is not None, 120, "attention weights")
    settle(app, 1)
    save("masked-words-attention")
    attention.set_view(ALL_HEADS)
    save("masked-words-attention-heads")
    attention.set_view(HEAD_VIEW)
    save("masked-words-attention-lines")
    attention.set_view(HEAT_MAP)
    masked_words.output_tabs.setCurrentIndex(0)

    window.show_tab(TabKey.QUESTION_ANSWERING)
    qa = window.tab(TabKey.QUESTION_ANSWERING)
    qa.passage_view.setPlainText(PASSAGE)
    qa.question_edit.setText(QUESTION)
    qa.top_k_spin.setValue(5)
    qa.answer_now()
    wait_until(app, lambda: qa.answers_view.model().rowCount() > 0, 120, "answers")
    save("question-answering")


def _attention_model_view(app, window, save):
    """Every layer and head of the demo model for a sentence pair, the first sentence's
    tokens attending to the second's."""
    from kbert_gui.masked_words.attention_panel import HEAT_MAP
    from kbert_gui.masked_words.attention_panel import MODEL_VIEW
    from kbert_gui.tab_key import TabKey

    window.show_tab(TabKey.MASKED_WORDS)
    masked_words = window.tab(TabKey.MASKED_WORDS)
    attention = masked_words.attention_panel
    text = masked_words.text
    masked_words.output_tabs.setCurrentWidget(attention)
    masked_words.editor.setPlainText(PAIR_TEXT)
    wait_until(
        app,
        lambda: attention.attention is not None and attention.attention.has_pair,
        120,
        "the attention of a sentence pair",
    )
    attention.set_view(MODEL_VIEW)
    attention.segment_combo.setCurrentIndex(attention.segment_combo.findText("A → B"))
    save("attention-model-view")
    attention.segment_combo.setCurrentIndex(0)
    attention.set_view(HEAT_MAP)
    masked_words.editor.setPlainText(text)
    masked_words.output_tabs.setCurrentIndex(0)


def _fine_tuning(app, window, save):
    from kbert_gui.tab_key import TabKey

    window.show_tab(TabKey.FINE_TUNING)
    tuning = window.tab(TabKey.FINE_TUNING)
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        data = folder / "train.csv"
        data.write_text(
            "text,label\n" + "".join(f'"{text}",{label}\n' for text, label in TRAINING_ROWS),
            encoding="utf-8",
        )
        settings = {"epochs": 8, "batch_size": 4, "learning_rate": 1e-3}
        _train(app, tuning, "classification", data, folder / "run", settings)
        save("fine-tuning")
        _evaluation_browser(app, tuning, save.folder)
        # "Open in Classify & tag": where a classifier is used.
        classify = _open_in_classify(app, window, tuning)
        text = "They danced at the ball until the music stopped."
        classify.set_text(text)
        wait_until(
            app,
            lambda: (classify.outcome is not None and classify.outcome.text == text)
            or classify.error_banner.message,
            120,
            "a classification",
        )
        save("classify")
        _saliency(app, classify, save)


def _saliency(app, classify, save):
    """"Why?" on the classification just shown: occlusion scores for its label."""
    panel = classify.saliency_panel
    panel.method_combo.setCurrentIndex(panel.method_combo.findData("occlusion"))
    panel.why_button.click()
    saliency = classify.controller.saliency
    wait_until(
        app,
        lambda: saliency.saliency is not None or classify.error_banner.message,
        120,
        "token saliency",
    )
    save("saliency")


def _evaluation_browser(app, tuning, output):
    """"Predictions…" on the run just finished: its evaluation rows and confusion
    matrix, the first cell off the diagonal that holds examples clicked (if any)."""
    browsers = []
    tuning.evaluation.browser_opened.connect(browsers.append)
    tuning.browse_predictions_button.click()
    wait_until(app, lambda: browsers, 120, "the evaluation browser")
    browser = browsers[0]
    browser.resize(1100, 560)
    matrix = browser.matrix_model
    size = matrix.rowCount()
    wrong = [(row, column) for row in range(size) for column in range(size)
             if row != column and matrix.count(row, column)]
    if wrong:
        browser.show_pair(matrix.index(*wrong[0]))
    settle(app)
    path = output / "evaluation-browser.png"
    browser.grab().save(str(path))
    print(f"wrote {path}")
    browser.close()


def _train(app, tuning, task, data, output, settings):
    """Fine-tunes for `task` on `data` (also the evaluation data) with `settings`."""
    tuning.set_task(task)
    tuning.set_training_file(str(data))
    tuning.set_evaluation_file(str(data))
    tuning.set_output_folder(str(output))
    wait_until(app, lambda: tuning.hyperparameters.is_ready, 60, "the hyperparameter form")
    wait_until(
        app,
        lambda: tuning.preview is not None and tuning.preview.ok
        and tuning.column_mapping(tuning.preview.kind) is not None,
        60,
        "the data preview",
    )
    for name, value in settings.items():
        tuning.hyperparameters.widget(name).setValue(value)
    finished = []
    tuning.run_finished.connect(finished.append)
    tuning.start()
    wait_until(app, lambda: finished or tuning.error_banner.message, 600, "fine-tuning")
    if not finished:
        raise RuntimeError(f"Fine-tuning failed: {tuning.error_banner.message}")


def _open_in_classify(app, window, tuning):
    """Clicks "Open in Classify & tag" and returns that tab once it shows."""
    from kbert_gui.tab_key import TabKey

    tuning.open_model_button.click()
    wait_until(app, lambda: window.current_tab_key() == TabKey.CLASSIFY, 120, "the classify tab")
    return window.tab(TabKey.CLASSIFY)


def _multiple_choice(app, window, save):
    import csv

    from kbert_gui.tab_key import TabKey

    window.show_tab(TabKey.FINE_TUNING)
    tuning = window.tab(TabKey.FINE_TUNING)
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        data = folder / "swag.csv"
        with open(data, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            count = len(CHOICE_ROWS[0][3])
            writer.writerow(["sent1", "sent2", *(f"ending{index}" for index in range(count)), "label"])
            for context, start, label, endings in CHOICE_ROWS:
                writer.writerow([context, start, *endings, label])
        # Enough steps for 8 rows to be learnt: the picture should show a choice.
        settings = {"epochs": 60, "batch_size": 6, "learning_rate": 2e-3}
        _train(app, tuning, "multiple-choice", data, folder / "swag-choices", settings)
        classify = _open_in_classify(app, window, tuning)
        wait_until(app, lambda: not classify.endings_editor.isHidden(), 120, "the endings")
        classify.set_choice(CHOICE_CONTEXT, CHOICE_ENDINGS)
        wait_until(
            app,
            lambda: (classify.outcome is not None and classify.outcome.choice is not None
                     and classify.outcome.endings == tuple(CHOICE_ENDINGS))
            or classify.error_banner.message,
            120,
            "a choice",
        )
        save("classify-multiple-choice")


if __name__ == "__main__":
    sys.exit(main())
