"""After a search, the curves and scores shown are the kept trial's, not the last one's."""

import types

from kbert.training.progress_events import EpochFinished
from kbert.training.progress_events import StepFinished
from kbert.training.progress_events import TrainingStarted
from kbert_gui.fine_tuning.fine_tuning_events import TrialFinished
from kbert_gui.fine_tuning.fine_tuning_panel import FineTuningPanel
from kbert_gui.fine_tuning.fine_tuning_run_view import FineTuningRunView

TASK = "classification"


def _trial(view, trial, losses, accuracy):
    """One trial of one epoch: a step per loss, then its evaluation; returns its row."""
    view.show_event(TrainingStarted(total_steps=len(losses), time=0.0), TASK)
    for step, loss in enumerate(losses, start=1):
        view.show_event(StepFinished(step, 1, loss, {}, float(step)), TASK)
    logs = {"epoch": 1, "loss": losses[-1], "accuracy": accuracy}
    view.show_event(EpochFinished(epoch=1, step=len(losses), logs=logs), TASK)
    row = {"trial": trial, "learning_rate": 1e-3, "accuracy": accuracy, "best_epoch": 1}
    view.show_event(TrialFinished(row), TASK)
    return row


def test_the_kept_trials_curves_and_scores_are_shown_at_the_end(qtbot, tmp_path):
    panel = FineTuningPanel()
    qtbot.addWidget(panel)
    view = FineTuningRunView(panel)
    search = {"space": "learning_rate=1e-3,5e-4", "total_trials": 2, "restarts": 1, "trials": 2}
    view.begin(TASK, str(tmp_path / "search"), False, search=search)
    kept = _trial(view, 0, [0.9, 0.7], accuracy=0.625)
    last = _trial(view, 1, [0.8, 0.75], accuracy=0.5417)
    assert panel.chart.metric_points == ((2, 0.5417),)  # while it runs: the trial running

    result = types.SimpleNamespace(
        status="completed", metric="accuracy", best=kept, trials=[kept, last],
        total_trials=2, preset_path=tmp_path / "search" / "model",
    )
    view.show_result(result, TASK)
    assert panel.chart.metric_points == ((2, 0.625),)
    assert panel.chart.loss_points == ((1, 0.9), (2, 0.7))
    assert panel.chart.names()[1] == "evaluation accuracy, trial 1 (kept)"
    model = panel.evaluation_model
    assert model.records() == [{"epoch": 1, "loss": 0.7, "accuracy": 0.625}]
    assert model.best_row == 0
