"""The screenshots of `render_screenshots.py` that need a model of their own or two runs:
Classify & tag on the bundled `demo-spam` as the app opens on it, the Runs view with two
fine-tuning runs, and the evaluation browser comparing their models (its embedding map,
then an edited example predicted again)."""

import pathlib
import tempfile

SPAM_TEXT = (
    "URGENT! Your mobile number has won a 2,000 pound bonus. Call 09066364589 now to claim. "
    "T&Cs apply."
)
EDITED_TEXT = "She wrote him a letter about the ball."


def classify_out_of_the_box(app, output, wait_until, settle):
    """Opens a window on `demo-spam`, classifies `SPAM_TEXT`, saves classify-demo-spam.png."""
    from kbert_gui.app import create_window
    from kbert_gui.tab_key import TabKey

    window = create_window("demo-spam")
    window.resize(1280, 820)
    window.show()
    window.context.load_environment()
    wait_until(app, lambda: window.context.environment is not None, 120, "Keras to load")
    wait_until(app, lambda: window.current_tab_key() == TabKey.CLASSIFY, 120, "Classify & tag")
    classify = window.tab(TabKey.CLASSIFY)
    classify.set_text(SPAM_TEXT)
    wait_until(
        app,
        lambda: (classify.outcome is not None and classify.outcome.text == SPAM_TEXT)
        or classify.error_banner.message,
        120,
        "a classification",
    )
    settle(app, 1.0)
    _save(window, output / "classify-demo-spam.png")
    window.close()


def runs_and_evaluation(app, window, output, training_rows, train, wait_until, settle):
    """Trains two runs of the ball-or-letter classifier from `window`'s Fine-tuning tab
    (`train` is render_screenshots' `_train`), then saves runs.png, evaluation-map.png and
    evaluation-edit.png."""
    from kbert_gui.services.evaluation_request import EvaluationRequest
    from kbert_gui.tab_key import TabKey

    window.show_tab(TabKey.FINE_TUNING)
    tuning = window.tab(TabKey.FINE_TUNING)
    folder = pathlib.Path(tempfile.mkdtemp(prefix="kbert-screenshots-"))
    data = folder / "train.csv"
    rows = "".join(f'"{text}",{label}\n' for text, label in training_rows)
    data.write_text("text,label\n" + rows, encoding="utf-8")
    runs = {"ball-or-letter-1e-3": (1e-3, 6), "ball-or-letter-1e-4": (1e-4, 1)}
    for name, (rate, epochs) in runs.items():
        train(app, tuning, "classification", data, folder / "runs" / name,
              {"epochs": epochs, "batch_size": 4, "learning_rate": rate})
    view = window.runs.show_runs()
    wait_until(app, lambda: view.model.rowCount() == len(runs), 60, "the runs")
    view.table.selectAll()
    settle(app, 1.0)
    _save(view, output / "runs.png")
    view.close()

    opened = []
    window.evaluation.browser_opened.connect(opened.append)
    first, second = (folder / "runs" / name / "model" for name in runs)
    window.evaluation.compare(EvaluationRequest(str(first), "classification", str(data)), second)
    wait_until(app, lambda: opened, 300, "the evaluation browser")
    browser = opened[0]
    browser.resize(1200, 640)
    _embedding_map(app, browser, output, wait_until, settle)
    _edited_example(app, browser, output, wait_until, settle)
    browser.close()


def _embedding_map(app, browser, output, wait_until, settle):
    tools = browser.tools
    tools.setCurrentIndex(1)
    wait_until(app, lambda: bool(tools.map.legend()), 300, "the embedding map")
    tools.colour_box.setCurrentText("Prediction")
    browser.table.selectRow(2)
    settle(app, 1.0)
    _save(browser, output / "evaluation-map.png")


def _edited_example(app, browser, output, wait_until, settle):
    tools = browser.tools
    tools.setCurrentIndex(0)
    browser.table.setCurrentIndex(browser.filter_model.index(0, 0))
    tools.editor.text_edit.setPlainText(EDITED_TEXT)
    tools.editor.predict_button.click()
    wait_until(
        app,
        lambda: "edited" in browser.rows_model.records[tools.editor.position]
        or "Not predicted" in tools.editor.result_label.text(),
        300,
        "the edited example's prediction",
    )
    settle(app, 1.0)
    _save(browser, output / "evaluation-edit.png")


def _save(widget, path):
    widget.grab().save(str(path))
    print(f"wrote {path}")
