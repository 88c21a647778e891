"""While a run waits (the model and data loading, the first step compiling, a slow step,
an epoch's evaluation), the status line says what it waits for, with the seconds
ticking; a new trial of a search estimates its ETA from its own steps."""

from kbert.training.progress_events import EpochFinished
from kbert.training.progress_events import StepFinished
from kbert.training.progress_events import TrainingStarted
from kbert_gui.fine_tuning.fine_tuning_events import TrialFinished
from kbert_gui.fine_tuning.fine_tuning_format import ETA_ESTIMATING
from kbert_gui.fine_tuning.fine_tuning_panel import FineTuningPanel
from kbert_gui.fine_tuning.fine_tuning_run_view import FineTuningRunView

TASK = "classification"


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def _view(qtbot):
    panel = FineTuningPanel()
    qtbot.addWidget(panel)
    clock = FakeClock()
    view = FineTuningRunView(panel, clock=clock)
    return panel, view, clock


def _tick(view, clock, seconds):
    """`seconds` pass; the status line's timer fires (it must be running)."""
    assert view.phase.running
    clock.now += seconds
    view.phase.render()


def test_loading_and_the_first_step_say_what_they_wait_for(qtbot, tmp_path):
    panel, view, clock = _view(qtbot)
    view.begin(TASK, str(tmp_path / "run"), False, epochs=2)
    _tick(view, clock, 12)
    assert panel.status_label.text() == "Loading the model and the data… 12 s"

    view.show_event(TrainingStarted(total_steps=320, time=0.0), TASK)
    assert panel.eta_label.text() == ETA_ESTIMATING
    assert panel.progress_bar.text() == "0 / 320 steps"
    _tick(view, clock, 71)
    assert panel.status_label.text() == "Compiling the training step… 71 s"


def test_a_slow_step_says_what_it_waits_for(qtbot, tmp_path):
    panel, view, clock = _view(qtbot)
    view.begin(TASK, str(tmp_path / "run"), False, epochs=2)
    view.show_event(TrainingStarted(total_steps=3200, time=0.0), TASK)
    view.show_event(StepFinished(1, 1, 0.7, {}, 10.0), TASK)
    assert panel.status_label.text() == "Training: epoch 1, step 1"
    assert panel.eta_label.text() == ETA_ESTIMATING  # one step: no estimate yet
    _tick(view, clock, 2)
    assert panel.status_label.text() == "Training: epoch 1, step 1"  # not slow yet
    _tick(view, clock, 28)
    line = panel.status_label.text()
    assert line.startswith("Training: epoch 1, step 1 · step 2 is taking a while")
    assert line.endswith(" 30 s")
    view.show_event(StepFinished(2, 1, 0.6, {}, 40.0), TASK)
    assert panel.status_label.text() == "Training: epoch 1, step 2"
    assert panel.progress_bar.text() == "2 / 3,200 steps"


def test_an_epochs_last_step_waits_for_its_evaluation(qtbot, tmp_path):
    panel, view, clock = _view(qtbot)
    view.begin(TASK, str(tmp_path / "run"), False, epochs=2)
    view.show_event(TrainingStarted(total_steps=4, time=0.0), TASK)
    for step in (1, 2):
        view.show_event(StepFinished(step, 1, 0.7, {}, float(step)), TASK)
    _tick(view, clock, 20)
    assert "evaluating the epoch and saving the model… 20 s" in panel.status_label.text()
    logs = {"epoch": 1, "loss": 0.7, "accuracy": 0.5}
    view.show_event(EpochFinished(epoch=1, step=2, logs=logs), TASK)
    _tick(view, clock, 20)
    assert "step 3 is taking a while" in panel.status_label.text()


def test_a_new_trial_estimates_its_eta_from_its_own_steps(qtbot, tmp_path):
    panel, view, clock = _view(qtbot)
    search = {"space": "learning_rate=1e-3,5e-4", "total_trials": 2, "restarts": 1, "trials": 2}
    view.begin(TASK, str(tmp_path / "search"), False, search=search, epochs=1)
    view.show_event(TrainingStarted(total_steps=2, time=0.0), TASK)
    for step in (1, 2):
        view.show_event(StepFinished(step, 1, 0.7, {}, float(step)), TASK)
    assert panel.eta_label.text().startswith("ETA 0:00")
    row = {"trial": 0, "learning_rate": 1e-3, "accuracy": 0.5, "best_epoch": 1}
    view.show_event(EpochFinished(epoch=1, step=2, logs={"epoch": 1, "accuracy": 0.5}), TASK)
    view.show_event(TrialFinished(row), TASK)

    view.show_event(TrainingStarted(total_steps=2, time=5.0), TASK)
    assert panel.eta_label.text() == ETA_ESTIMATING
    assert panel.progress_bar.value() == 0
    _tick(view, clock, 50)
    assert panel.status_label.text() == "Trial 2 of 2: Compiling the training step… 50 s"


def test_the_seconds_stop_when_the_run_ends(qtbot, tmp_path):
    panel, view, clock = _view(qtbot)
    view.begin(TASK, str(tmp_path / "run"), False)
    view.show_cancelling()
    _tick(view, clock, 3)
    assert panel.status_label.text() == "Cancelling after the current batch… 3 s"
    view.show_cancelled(None, TASK)
    assert not view.phase.running
    assert "Cancelled" in panel.status_label.text()
    view.show_ended()
    assert not view.phase.running
