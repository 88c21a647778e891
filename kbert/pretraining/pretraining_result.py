"""What a pretraining run returns."""

import dataclasses
import pathlib

COMPLETED = "completed"
CANCELLED = "cancelled"


@dataclasses.dataclass
class PretrainingResult:
    """The outcome of `PretrainingLoop.run`.

    Attributes:
        status: "completed" or "cancelled".
        global_step: batches trained over the whole run (resumed parts included).
        train_metrics: Keras' running means over the batches of the whole run (a
            resumed run continues the interrupted one's): `loss`, `mlm_loss`,
            `mlm_accuracy`, `nsp_loss`, `nsp_accuracy`.
        eval_metrics: the same names on the evaluation data, or None.
        preset_path: the saved model (model and tokenizer), or None when cancelled.
        checkpoint_path: the training checkpoint to resume from.
    """

    status: str
    global_step: int
    train_metrics: dict
    eval_metrics: dict | None
    preset_path: pathlib.Path | None
    checkpoint_path: pathlib.Path

    @property
    def cancelled(self):
        return self.status == CANCELLED

    def to_dict(self):
        values = dataclasses.asdict(self)
        for key in ("preset_path", "checkpoint_path"):
            values[key] = None if values[key] is None else str(values[key])
        return values
