"""The progress protocol of `FineTuner`: what a CLI progress bar or a GUI listens to."""


class FineTuningCallback:
    """Base class of fine-tuning listeners; every method is optional.

    Subclass it (or pass any object with some of these methods) and override what
    you need. The methods run on the thread that runs `FineTuner.run`; a GUI should
    forward them to its UI thread (as signals) rather than touch widgets here.
    """

    def on_train_begin(self, total_steps):
        """Training starts; `total_steps` batches make the whole run (all epochs)."""

    def on_step(self, step, logs):
        """Batch number `step` (counted from 1 over the whole run) is done.

        `logs` holds `epoch` (counted from 1) and `loss` (the mean over the epoch's
        batches so far).
        """

    def on_epoch_end(self, epoch, logs):
        """Epoch `epoch` (counted from 1) is done and evaluated.

        `logs` holds the training `loss`, the `learning_rate` at the end of the
        epoch, and the evaluation scores when there is evaluation data.
        """

    def on_train_end(self, result):
        """Training is over (completed, stopped early or cancelled): a `FineTuningResult`."""
