"""Multiple choice in the app: the "Classify & tag" tab shows what `choose` returns for a
context and its editable endings, exports it, and a model fine-tuned on a SWAG CSV through
the fine-tuning tab learns the rule its data was generated with.

Runs on every backend with one-layer models of hidden size 32.
"""

import csv
import json

import pytest
from fine_tuning_data import make_tiny_preset
from fine_tuning_data import swag_rows
from fine_tuning_data import write_swag
from fine_tuning_helpers import SMALL_MODEL
from fine_tuning_helpers import open_window
from fine_tuning_helpers import run_and_open
from fine_tuning_helpers import set_up_run
from gui_helpers import make_context
from gui_helpers import stop_context
from PySide6.QtCore import Qt

from kbert_gui.classify.choice_probability_model import CHOSEN_MARK
from kbert_gui.classify.choice_probability_model import ChoiceProbabilityModel
from kbert_gui.classify.classify_panel import CHOICES_PAGE
from kbert_gui.classify.classify_tab import ClassifyTab
from kbert_gui.classify.label_probability_model import PROBABILITY_ROLE
from kbert_gui.tab_key import TabKey

TIMEOUT_MS = 60_000
CONTEXT = "the dog sat near the old house"
ENDINGS = ["ran on the road", "sat with a great cat", "sat under a big tree"]
# Chance is 0.25 (four endings); the right ending holds a positive word.
ACCURACY_THRESHOLD = 0.8


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A tiny backbone preset and an (untrained) multiple-choice model saved from it."""
    from kbert.models import BertMultipleChoice

    folder = tmp_path_factory.mktemp("gui_choice")
    backbone = make_tiny_preset(folder / "preset", **SMALL_MODEL)
    chooser = folder / "runs" / "swag" / "model"
    BertMultipleChoice.from_preset(backbone).save_to_preset(chooser)
    return {"backbone": backbone, "chooser": chooser}


@pytest.fixture
def tab(qtbot, tmp_path, models):
    context = make_context(tmp_path, str(models["chooser"]))
    widget = ClassifyTab(context)
    qtbot.addWidget(widget)
    yield widget
    stop_context(context)


def _choose(tab, qtbot, context, endings):
    tab.set_choice(context, endings)
    expected = tuple(ending for ending in endings if ending.strip())
    qtbot.waitUntil(
        lambda: bool(
            (
                tab.outcome is not None
                and tab.outcome.text == context
                and tab.outcome.endings == expected
            )
            or tab.error_banner.message
        ),
        timeout=TIMEOUT_MS,
    )
    assert tab.error_banner.message == ""
    return tab.outcome


def _assert_shows(tab, expected):
    """The tab's table and headline are `expected` (a `Choice`), to 1e-6."""
    model = tab.choices_model
    assert [ending for ending, _ in model.rows()] == list(expected.endings)
    assert [p for _, p in model.rows()] == pytest.approx(expected.probabilities, abs=1e-6)
    assert model.chosen_row() == expected.index
    assert model.data(model.index(expected.index, 0)) == CHOSEN_MARK
    assert tab.outcome.choice.index == expected.index
    assert tab.outcome.choice.ending == expected.ending
    assert tab.headline_label.text().startswith(f"{expected.index + 1}. {expected.ending} · ")
    assert tab.results_stack.currentIndex() == CHOICES_PAGE


def test_the_choice_model_passes_the_model_tester(qtmodeltester):
    from kbert.inference import Choice

    model = ChoiceProbabilityModel()
    model.set_choice(Choice(1, "b", 0.7, (0.2, 0.7, 0.1), ("a", "b", "c")))
    qtmodeltester.check(model)
    assert model.rows() == [("a", 0.2), ("b", 0.7), ("c", 0.1)]  # ending order, not sorted
    assert model.data(model.index(1, 2), PROBABILITY_ROLE) == 0.7
    assert model.data(model.index(1, 1), Qt.ItemDataRole.FontRole).bold()
    assert model.data(model.index(0, 0)) == "" and model.data(model.index(1, 0)) == CHOSEN_MARK


def test_a_multiple_choice_model_shows_what_choose_returns(tab, qtbot, models):
    from kbert.models import BertMultipleChoice

    reference = BertMultipleChoice.from_preset(models["chooser"])
    _choose(tab, qtbot, CONTEXT, ENDINGS)
    _assert_shows(tab, reference.choose(CONTEXT, ENDINGS))
    assert not tab.endings_editor.isHidden() and tab.pair_edit.isHidden()
    assert tab.head_label.text().startswith("Multiple choice:")
    assert "was never trained" in tab.head_warning.message

    # Add an ending, then remove the first: each edit is a new choice.
    editor = tab.endings_editor
    editor.add_ending("ran with a lovely dog")
    qtbot.waitUntil(lambda: len(tab.outcome.endings) == 4, timeout=TIMEOUT_MS)
    _assert_shows(tab, reference.choose(CONTEXT, ENDINGS + ["ran with a lovely dog"]))
    editor.remove_ending(0)
    qtbot.waitUntil(lambda: tab.outcome.endings[0] == ENDINGS[1], timeout=TIMEOUT_MS)
    _assert_shows(tab, reference.choose(CONTEXT, ENDINGS[1:] + ["ran with a lovely dog"]))
    # Never fewer than two rows; one filled ending is no choice, and nothing is shown.
    while len(editor.line_edits()) > 2:
        editor.remove_ending(0)
    editor.remove_ending(0)
    assert len(editor.line_edits()) == 2
    editor.line_edits()[1].clear()
    qtbot.waitUntil(lambda: tab.outcome is None, timeout=TIMEOUT_MS)
    assert tab.choices_model.rowCount() == 0


def test_a_choice_exports_as_csv_and_json(tab, qtbot, tmp_path, models):
    outcome = _choose(tab, qtbot, CONTEXT, ENDINGS)
    csv_action, json_action = tab.export_actions()[:2]  # then the saliency exports
    csv_action.write(tmp_path / "choice.csv")
    with open(tmp_path / "choice.csv", encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    assert [(int(row["index"]), row["ending"]) for row in rows] == list(enumerate(ENDINGS))
    assert [float(row["probability"]) for row in rows] == list(outcome.choice.probabilities)
    assert [row["chosen"] == "True" for row in rows] == [
        index == outcome.choice.index for index in range(len(ENDINGS))
    ]
    json_action.write(tmp_path / "choice.json")
    document = json.loads((tmp_path / "choice.json").read_text(encoding="utf-8"))
    assert document["context"] == CONTEXT and document["endings"] == ENDINGS
    assert document["index"] == outcome.choice.index
    assert document["ending"] == outcome.choice.ending
    assert document["probabilities"] == list(outcome.choice.probabilities)
    assert document["model_class"] == "BertMultipleChoice"


def test_fine_tune_on_a_swag_file_in_the_app_then_choose(qtbot, tmp_path, models):
    from kbert.models import BertMultipleChoice

    window = open_window(qtbot, tmp_path, models["backbone"])
    tuning = window.tab(TabKey.FINE_TUNING)
    classify = window.tab(TabKey.CLASSIFY)
    train = write_swag(tmp_path / "train.csv", swag_rows(96, seed=1))
    dev = write_swag(tmp_path / "dev.csv", swag_rows(48, seed=2))
    set_up_run(
        tuning, qtbot, train, tmp_path / "runs" / "swag", evaluation=dev,
        # Five epochs: after three, accuracy was 0.98 here and 0.75 on CI's loaded machine
        # (the third epoch is where this tiny model learns the rule).
        task="multiple-choice", epochs=5, batch_size=16, learning_rate=1e-2, max_length=16,
    )
    assert tuning.preview.summary == "96 examples, 4 endings each"
    # The probe is the training file's first example: its context and four endings.
    probe = tuning.probe_input.probe()
    assert probe["context"] == swag_rows(1, seed=1)[0][3] and len(probe["endings"]) == 4
    saved = run_and_open(window, qtbot)
    result = tuning.result
    assert result.metric == "accuracy" and result.best_metric >= ACCURACY_THRESHOLD
    probes = [tuning.probe_list.item(row).text() for row in range(tuning.probe_list.count())]
    assert probes[0].startswith("Epoch 1: ") and "%" in probes[0]
    assert window.model_label.text() == "runs/swag (multiple choice)"
    _choose(classify, qtbot, CONTEXT, ENDINGS)
    assert classify.head_warning.message == ""  # a trained head: no warning
    expected = BertMultipleChoice.from_preset(saved).choose(CONTEXT, ENDINGS)
    _assert_shows(classify, expected)
    assert expected.index == 1  # the ending with the positive word
    stop_context(window.context)
