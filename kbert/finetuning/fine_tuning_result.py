"""What a fine-tuning run returns."""

from dataclasses import dataclass
from dataclasses import field

# How a run ended.
COMPLETED = "completed"
STOPPED_EARLY = "stopped_early"
CANCELLED = "cancelled"


@dataclass(frozen=True)
class FineTuningResult:
    """The outcome of `FineTuner.run`.

    Args:
        status: "completed" (every epoch ran), "stopped_early" (the evaluation
            metric stopped improving for `patience` epochs) or "cancelled".
        metric: the name of the score that selects the best model ("accuracy",
            "f1", "exact_match", ...); None without evaluation data.
        best_metric: the best value of `metric` over the epochs; None without
            evaluation data.
        best_epoch: the epoch (counted from 1) that reached it; without evaluation
            data, the last finished epoch.
        final_metrics: the logs of the last finished epoch (training loss,
            learning rate, evaluation scores); empty if no epoch finished.
        preset_path: the preset folder holding the best model (the last one without
            evaluation data); None if no epoch finished.
        checkpoint_path: the training checkpoint to resume from.
        history: one dict of logs per finished epoch, each with its `epoch` number.
        global_step: batches trained over the whole run.
        devices: the devices each batch was split over (1 without data parallelism).
        processes: the processes that shared them (several with `--distributed`).
    """

    status: str
    metric: object
    best_metric: object
    best_epoch: object
    final_metrics: dict
    preset_path: object
    checkpoint_path: object
    history: list = field(default_factory=list)
    global_step: int = 0
    devices: int = 1
    processes: int = 1

    @property
    def cancelled(self):
        return self.status == CANCELLED

    def to_dict(self):
        """The result as JSON-ready plain data."""
        return {
            "status": self.status,
            "metric": self.metric,
            "best_metric": self.best_metric,
            "best_epoch": self.best_epoch,
            "final_metrics": dict(self.final_metrics),
            "preset_path": None if self.preset_path is None else str(self.preset_path),
            "checkpoint_path": str(self.checkpoint_path),
            "history": [dict(entry) for entry in self.history],
            "global_step": self.global_step,
            "devices": self.devices,
            "processes": self.processes,
        }
