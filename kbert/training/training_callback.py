"""The progress protocol of kbert's training loops: what a progress bar or an app hears."""


class TrainingCallback:
    """Base class of training listeners; every method is optional.

    `FineTuner` and `PretrainingLoop` call these on the thread that runs them; a GUI
    should forward them to its UI thread (as signals) rather than touch widgets here.
    Pass any object with some of these methods, or subclass this and override what you
    need. `ProgressEvents` turns the calls into typed events for one function to
    consume.
    """

    def on_train_begin(self, total_steps):
        """Training starts; `total_steps` batches make the whole run."""

    def on_step(self, step, logs):
        """Batch number `step` (counted from 1 over the whole run) is done.

        `logs`: the running means since the start of the run (of the epoch, when
        fine-tuning): fine-tuning gives `epoch` (counted from 1) and `loss`;
        pretraining gives `loss`, `mlm_loss`, `mlm_accuracy`, `nsp_loss` and
        `nsp_accuracy`.
        """

    def on_epoch_end(self, epoch, logs):
        """Fine-tuning epoch `epoch` (counted from 1) is done and evaluated.

        `logs` holds the training `loss`, the `learning_rate` at the end of the epoch,
        and the evaluation scores when there is evaluation data.
        """

    def on_train_end(self, result):
        """Training is over (completed, stopped early or cancelled): the run's result."""
