"""The Search choice of the fine-tuning tab: a single run, the paper's grid, a grid or
ranges of one's own; what it refuses; and a small grid search from Start to its model."""

import keras
import pytest
from fine_tuning_helpers import RUN_TIMEOUT_MS
from fine_tuning_helpers import data  # noqa: F401 (a fixture)
from fine_tuning_helpers import set_up_run
from fine_tuning_helpers import tab  # noqa: F401 (a fixture)
from fine_tuning_helpers import write_csv
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from fine_tuning_data import classification_examples

from kbert.finetuning.fine_tuning_search import JOURNAL_FILE
from kbert.finetuning.fine_tuning_search import TABLE_JSON
from kbert.finetuning.search_space import SearchSpace
from kbert_gui.fine_tuning.search_form import OWN_SPACE
from kbert_gui.fine_tuning.search_form import PAPER_GRID
from kbert_gui.fine_tuning.search_form import SINGLE_RUN
from kbert_gui.fine_tuning.search_progress import TRIALS_JSON
from kbert_gui.fine_tuning.search_trials_model import SearchTrialsModel
from kbert_gui.fine_tuning.start_problem import SEARCH_JOURNAL


def _choose(form, kind, text=None):
    form.kind_box.setCurrentIndex(form.kind_box.findData(kind))
    if text is not None:
        form.space_edit.setText(text)


def _start_refusal(tab, qtbot):
    qtbot.mouseClick(tab.start_button, Qt.MouseButton.LeftButton)
    return tab.error_banner.message


def test_the_app_names_kbert_files():
    assert SEARCH_JOURNAL == JOURNAL_FILE and TRIALS_JSON == TABLE_JSON


def test_restarts_and_trials_show_where_they_apply(tab):
    form = tab.search_form
    assert form.kind() == SINGLE_RUN and form.search() is None
    shown = lambda widget: widget.isVisibleTo(tab)  # noqa: E731
    assert not any(shown(w) for w in (form.space_edit, form.restarts_box, form.trials_box))
    _choose(form, PAPER_GRID)
    assert shown(form.restarts_box) and not shown(form.trials_box) and not shown(form.space_edit)
    form.restarts_box.setValue(2)
    assert form.search() == {
        "space": "paper", "restarts": 2, "trials": None, "total_trials": 4 * 2 * 3 * 2
    }
    _choose(form, OWN_SPACE, "learning_rate=1e-5:1e-4:log;epochs=2:4")
    assert shown(form.space_edit) and shown(form.trials_box) and not shown(form.restarts_box)
    assert form.search()["trials"] == form.trials_box.value()
    _choose(form, OWN_SPACE, "learning_rate=3e-5,2e-5;batch_size=16")
    assert shown(form.restarts_box) and not shown(form.trials_box)
    assert form.search()["total_trials"] == 2 * form.restarts_box.value()


def test_bad_grid_text_shows_kbert_message_and_blocks_start(tab, qtbot, tmp_path, data):
    set_up_run(tab, qtbot, data["train"], tmp_path / "run", evaluation=data["evaluation"])
    form = tab.search_form
    _choose(form, OWN_SPACE, "learning_rate=fast")
    with pytest.raises(ValueError) as expected:
        SearchSpace.parse("learning_rate=fast")
    assert form.problem_label.isVisibleTo(tab)
    assert form.problem_label.text() == str(expected.value)
    assert str(expected.value) in _start_refusal(tab, qtbot)
    assert tab.worker is None
    _choose(form, OWN_SPACE, "learning_rate=3e-5")
    assert not form.problem_label.isVisibleTo(tab) and form.problem() is None


def test_a_search_without_evaluation_data_is_refused(tab, qtbot, tmp_path, data):
    set_up_run(tab, qtbot, data["train"], tmp_path / "run")
    _choose(tab.search_form, PAPER_GRID)
    assert "needs an evaluation file" in _start_refusal(tab, qtbot)
    assert tab.worker is None


def test_a_folder_holding_a_search_is_continued_by_a_search_only(tab, qtbot, tmp_path, data):
    folder = tmp_path / "search"
    folder.mkdir()
    (folder / SEARCH_JOURNAL).write_text("", encoding="utf-8")
    set_up_run(tab, qtbot, data["train"], folder, evaluation=data["evaluation"])
    qtbot.waitUntil(lambda: tab.resume_note.isVisibleTo(tab))
    assert "holds a search" in tab.resume_note.text()
    assert "holds a search" in _start_refusal(tab, qtbot)
    _choose(tab.search_form, PAPER_GRID)
    assert "Start continues it" in tab.resume_note.text()
    assert tab.run_controller._problem(resume=False) is None


def test_the_trials_model_sorts_and_marks_the_best(qtmodeltester):
    model = SearchTrialsModel()
    model.start("accuracy")
    row = dict(learning_rate=3e-5, restart=0, seed=0, status="completed", best_epoch=1)
    model.add_row({"trial": 1, **row, "accuracy": 0.75, "time_s": 2.0})
    model.add_row({"trial": 0, **row, "accuracy": 0.75, "time_s": 1.0})
    qtmodeltester.check(model)
    assert model.keys == ("trial", "learning_rate", "seed", "accuracy", "best_epoch", "time_s")
    assert [model.data(model.index(r, 0)) for r in range(2)] == ["1", "2"]
    # A tie goes to the earlier trial, as the search keeps it.
    assert model.best_row == 0
    assert model.data(model.index(0, 3), Qt.ItemDataRole.FontRole).bold()


@pytest.mark.slow
@pytest.mark.skipif(
    keras.backend.backend() != "jax",
    reason="the search is backend-independent bookkeeping around FineTuner, whose runs "
    "the other backends' passes test from the tab; one backend shows the tab drives it",
)
def test_a_grid_search_from_the_tab_keeps_its_best_model(tab, qtbot, tmp_path, data):
    train = write_csv(tmp_path / "train.csv", classification_examples(16, seed=1))
    evaluation = write_csv(tmp_path / "dev.csv", classification_examples(8, seed=2))
    output = tmp_path / "search"
    set_up_run(
        tab, qtbot, train, output, evaluation=evaluation, epochs=1, batch_size=4, max_length=16
    )
    _choose(tab.search_form, OWN_SPACE, "learning_rate=1e-3,5e-4")
    trials = []
    tab.trials_model.rowsInserted.connect(lambda *_: trials.append(tab.trials_model.rowCount()))
    tab.trials_model.modelReset.connect(lambda: trials.append(tab.trials_model.rowCount()))
    with qtbot.waitSignal(tab.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(tab.start_button, Qt.MouseButton.LeftButton)
    assert finished.args == ["completed"], tab.error_banner.message
    assert 1 in trials  # the table filled as the trials ended, not only at the end
    model = tab.trials_model
    assert tab.trials_group.isVisibleTo(tab) and model.rowCount() == 2
    best = tab.result.best
    assert model.best_row == best["trial"]
    font = model.data(model.index(model.best_row, 0), Qt.ItemDataRole.FontRole)
    assert isinstance(font, QFont) and font.bold()
    assert tab.result.preset_path == output / "model"
    assert tab.open_model_button.isEnabled()
    assert tab.predictions_request().source == str(output / "model")
    tab.open_saved_model()
    assert tab.context.models.source == str(output / "model")
