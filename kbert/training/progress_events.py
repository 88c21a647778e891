"""Typed progress events of a training run, made from the `TrainingCallback` calls.

Several small event classes live in this one module on purpose: they are one idea (the
vocabulary of progress), and a consumer dispatches on them in one place.
"""

import dataclasses
import time


@dataclasses.dataclass(frozen=True)
class TrainingStarted:
    """The run begins: `total_steps` batches in all; `time` from `time.perf_counter()`."""

    total_steps: int
    time: float


@dataclasses.dataclass(frozen=True)
class StepFinished:
    """Batch `step` (counted from 1 over the run) is done.

    `epoch` is the fine-tuning epoch (None when pretraining), `loss` the running mean,
    `logs` everything the loop reported for the step.
    """

    step: int
    epoch: int
    loss: float
    logs: dict
    time: float


@dataclasses.dataclass(frozen=True)
class EpochFinished:
    """Fine-tuning epoch `epoch` is done and evaluated; `logs` as `on_epoch_end`'s."""

    epoch: int
    step: int
    logs: dict


@dataclasses.dataclass(frozen=True)
class TrainingFinished:
    """The run is over; `result` is its `FineTuningResult` or `PretrainingResult`."""

    result: object


class ProgressEvents:
    """A `TrainingCallback` that hands each call to `sink` as one of the events above.

    Args:
        sink: a function of one event, called on the training thread.

    Example:

    >>> events = []
    >>> FineTuner("classification", "demo", "runs/x", callbacks=[ProgressEvents(events.append)])
    """

    def __init__(self, sink):
        self._sink = sink
        self._step = 0

    def on_train_begin(self, total_steps):
        self._sink(TrainingStarted(total_steps=int(total_steps), time=time.perf_counter()))

    def on_step(self, step, logs):
        self._step = step
        self._sink(
            StepFinished(
                step=int(step),
                epoch=logs.get("epoch"),
                loss=logs.get("loss"),
                logs=dict(logs),
                time=time.perf_counter(),
            )
        )

    def on_epoch_end(self, epoch, logs):
        self._sink(EpochFinished(epoch=int(epoch), step=self._step, logs=dict(logs)))

    def on_train_end(self, result):
        self._sink(TrainingFinished(result=result))
