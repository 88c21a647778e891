"""The progress bar of `kbert finetune` and `kbert pretrain`, fed by typed progress events.

Not a subcommand itself.
"""

import sys

# Running logs shown beside the bar, when the run reports them.
SHOWN_LOGS = ("epoch", "loss", "mlm_loss", "mlm_accuracy", "nsp_accuracy")


class TrainingProgressBar:
    """Consumes `kbert.training` progress events: a bar over the run's batches, the
    running losses beside it and each epoch's scores above it.

    Pass `ProgressEvents(bar)` as a training callback, and `close()` it when the run
    ends, however it ends.

    Args:
        description: the bar's label ("fine-tuning", "pretraining").
        disable: draw nothing (`--no-progress`).
    """

    def __init__(self, description, disable=False):
        self.description = description
        self.disable = disable
        self.bar = None

    def __call__(self, event):
        from kbert.training import EpochFinished
        from kbert.training import StepFinished
        from kbert.training import TrainingFinished
        from kbert.training import TrainingStarted

        if isinstance(event, TrainingStarted):
            from tqdm import tqdm

            self.bar = tqdm(
                total=event.total_steps,
                desc=self.description,
                unit="batch",
                file=sys.stderr,
                disable=self.disable,
            )
        elif isinstance(event, StepFinished):
            # A resumed run starts past 0: the bar jumps to the step.
            self.bar.update(event.step - self.bar.n)
            shown = {
                name: format_value(event.logs[name])
                for name in SHOWN_LOGS
                if event.logs.get(name) is not None
            }
            self.bar.set_postfix(shown, refresh=False)
        elif isinstance(event, EpochFinished):
            scores = ", ".join(
                f"{key} {format_value(value)}" for key, value in event.logs.items() if key != "epoch"
            )
            self.bar.write(f"epoch {event.epoch}: {scores}", file=sys.stderr)
        elif isinstance(event, TrainingFinished):
            self.close()

    def close(self):
        if self.bar is not None:
            self.bar.close()


def format_value(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)
