"""What fine-tuning (`kbert.tasks`) and pretraining (`kbert.pretraining`) both stand on.

- `create_optimizer`, `LinearWarmupDecay`, `precision_policy`: AdamW or LAMB on BERT's
  warm-up/decay schedule, no decay on LayerNorm and biases, precision "auto";
- `TrainingCheckpoint`: variables, optimizer state, metric totals and run state in one
  file, for exact resume; `start_state`: a new run or the checkpoint's;
- `StepCallback`: the per-batch work (counting, reports, checkpoints, cancellation);
- `CancellationToken`, `TrainingCallback` and the typed `ProgressEvents`.

Names load lazily (`kbert.lazy_imports`): importing this package imports no Keras.
"""

from kbert.lazy_imports import lazy_attributes

_PUBLIC_NAMES = {
    "CancellationToken": "kbert.training.cancellation_token",
    "EpochFinished": "kbert.training.progress_events",
    "LinearWarmupDecay": "kbert.training.optimization",
    "OPTIMIZERS": "kbert.training.optimization",
    "PRECISIONS": "kbert.training.optimization",
    "ProgressEvents": "kbert.training.progress_events",
    "StepCallback": "kbert.training.step_callback",
    "StepFinished": "kbert.training.progress_events",
    "TrainingCallback": "kbert.training.training_callback",
    "TrainingCheckpoint": "kbert.training.training_checkpoint",
    "TrainingFinished": "kbert.training.progress_events",
    "TrainingStarted": "kbert.training.progress_events",
    "create_optimizer": "kbert.training.optimization",
    "precision_policy": "kbert.training.optimization",
    "resolve_precision": "kbert.training.optimization",
    "start_state": "kbert.training.run_state",
}

__all__ = sorted(_PUBLIC_NAMES)
__getattr__, __dir__ = lazy_attributes(__name__, _PUBLIC_NAMES)
