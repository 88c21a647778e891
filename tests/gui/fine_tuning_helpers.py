"""Shared pieces of the tests that fine-tune in the app: a small model, a CSV writer, the
set-up of a run on the fine-tuning tab, a window to run it in and open its model, and the
fixtures `data` (a tiny preset with its data files) and `tab` (a fine-tuning tab on it),
which a test module imports to use."""

import csv
import pathlib

import pytest
from gui_helpers import make_context
from gui_helpers import stop_context
from PySide6.QtCore import Qt
from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset

from kbert_gui.app import create_window
from kbert_gui.fine_tuning.fine_tuning_tab import FineTuningTab
from kbert_gui.tab_key import TabKey

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
SMALL_MODEL = dict(
    hidden_size=32, num_layers=1, num_heads=2, intermediate_size=48, max_positions=32
)
RUN_TIMEOUT_MS = 240_000
WINDOW_TIMEOUT_MS = 60_000


def write_csv(path, examples, drop_label_at=None):
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["text", "label"])
        for index, example in enumerate(examples):
            writer.writerow([example.text, "" if index == drop_label_at else example.label])
    return path


def set_up_run(tab, qtbot, train, output, evaluation=None, task="classification", **settings):
    tab.set_task(task)
    tab.set_evaluation_file(evaluation)
    tab.set_training_file(train)
    tab.set_output_folder(output)
    if task == "classification":
        # The first preview offers the columns; the second validates the mapping.
        qtbot.waitUntil(
            lambda: tab.preview is not None and "examples" in tab.preview.summary, timeout=20_000
        )
    else:
        qtbot.waitUntil(lambda: tab.preview is not None, timeout=20_000)
    tab.hyperparameters.set_values(**settings)


def open_window(qtbot, tmp_path, source):
    """A shown main window on `source`, its fine-tuning tab ready and current."""
    window = create_window(context=make_context(tmp_path, str(source)))
    qtbot.addWidget(window)
    window.show()
    tuning = window.tab(TabKey.FINE_TUNING)
    qtbot.waitUntil(lambda: tuning.hyperparameters.is_ready, timeout=WINDOW_TIMEOUT_MS)
    window.show_tab(TabKey.FINE_TUNING)
    return window


def run_and_open(window, qtbot):
    """Starts the set-up run, checks that it completes, then opens the saved model with
    the tab's button and waits for the window to show it in "Classify & tag" (where a
    classifier, tagger or multiple-choice model lands); returns its preset path."""
    tuning = window.tab(TabKey.FINE_TUNING)
    with qtbot.waitSignal(tuning.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(tuning.start_button, Qt.MouseButton.LeftButton)
    assert finished.args == ["completed"], tuning.error_banner.message
    saved = str(tuning.result.preset_path)
    with qtbot.waitSignal(
        window.context.opener.described,
        timeout=WINDOW_TIMEOUT_MS,
        check_params_cb=lambda description: description.source == saved,
    ):
        qtbot.mouseClick(tuning.open_model_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: window.current_tab_key() == TabKey.CLASSIFY, timeout=WINDOW_TIMEOUT_MS
    )
    return tuning.result.preset_path


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gui_fine_tuning")
    preset = make_tiny_preset(folder / "preset", **SMALL_MODEL)
    documents = []
    for document in range(12):
        examples = classification_examples(4, seed=100 + document)
        documents.append("\n".join(f"{example.text} ." for example in examples))
    corpus = folder / "corpus.txt"
    corpus.write_text("\n\n".join(documents) + "\n", encoding="utf-8")
    return {
        "preset": preset,
        # 32 examples in batches of 8: 4 steps an epoch. Runs set max_length=16: one
        # length bucket and full batches, so training compiles one step function.
        "train": write_csv(folder / "train.csv", classification_examples(32, seed=1)),
        "evaluation": write_csv(folder / "evaluation.csv", classification_examples(16, seed=2)),
        # 80 examples: 10 steps an epoch.
        "long_train": write_csv(folder / "long_train.csv", classification_examples(80, seed=3)),
        "corpus": corpus,
    }


@pytest.fixture
def tab(qtbot, tmp_path, data):
    context = make_context(tmp_path, str(data["preset"]))
    widget = FineTuningTab(context)
    qtbot.addWidget(widget)
    # The defaults come from a worker (it imports Keras): wait for them, or for the error
    # that says why they did not come, and show that error if so.
    qtbot.waitUntil(
        lambda: widget.hyperparameters.is_ready or bool(widget.error_banner.message),
        timeout=120_000,
    )
    assert widget.hyperparameters.is_ready, widget.error_banner.message
    yield widget
    stop_context(context)
