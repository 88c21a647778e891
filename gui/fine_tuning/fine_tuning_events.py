"""The app's own progress events of a run, beside kbert's (`kbert.training`'s
`TrainingStarted`, `StepFinished`, `EpochFinished`, `TrainingFinished`).

Three small event classes in one module on purpose: with kbert's they are the vocabulary
the fine-tuning job reports and the run controller dispatches on.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class ProbePredicted:
    """The probe's prediction at the end of epoch `epoch` (None: by the saved model).

    `result` is what the model's `classify`/`tag`/`answer`/`fill_mask` returned, or
    None with the reason in `error`.
    """

    epoch: int
    probe: dict
    result: object
    error: str


@dataclasses.dataclass(frozen=True)
class LogLine:
    """A line for the run's log: the job's own, or a `kbert` log record of the run."""

    message: str
    level: str = "INFO"


@dataclasses.dataclass(frozen=True)
class TrialFinished:
    """A trial of a search finished: its row (`FineTuningSearch`'s `on_trial_end`)."""

    row: dict
