"""The progress protocol of `FineTuner`: what a CLI progress bar or a GUI listens to."""

from kbert.training.training_callback import TrainingCallback


class FineTuningCallback(TrainingCallback):
    """Base class of fine-tuning listeners; every method is optional.

    `FineTuner` calls every `TrainingCallback` method: `on_step` with `epoch` and the
    epoch's running `loss`, `on_epoch_end` with the epoch's training loss, learning
    rate and evaluation scores, `on_train_end` with a `FineTuningResult`.
    """
