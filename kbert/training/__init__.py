"""What fine-tuning (`kbert.finetuning`) and pretraining (`kbert.pretraining`) both stand on.

- `create_optimizer`, `LinearWarmupDecay`, `precision_policy`: AdamW or LAMB on BERT's
  warm-up/decay schedule, no decay on LayerNorm and biases, precision "auto";
- `TrainingCheckpoint`: variables, optimizer state, metric totals and run state in one
  file, for exact resume; `start_state`: a new run or the checkpoint's;
- `StepCallback`: the per-batch work (counting, reports, checkpoints, cancellation);
- `set_random_seed`: Keras' seeding without importing TensorFlow on other backends;
- `data_parallel`, `initialize_distributed`: every local device, or several processes,
  through `keras.distribution` (JAX) and `tf.distribute` (TensorFlow);
- `CancellationToken`, `TrainingCallback` and the typed `ProgressEvents`.

Names load lazily (`kbert.lazy_imports`): importing this package imports no Keras.
"""

from kbert.lazy_imports import lazy_attributes
from kbert.lazy_imports import names_by_module

_PUBLIC_NAMES = names_by_module(
    {
        "kbert.training.bert_adamw": ("BertAdamW",),
        "kbert.training.cancellation_token": ("CancellationToken",),
        "kbert.training.distribution": ("data_parallel", "initialize_distributed"),
        "kbert.training.ignore_class_accuracy": ("IgnoreClassAccuracy",),
        "kbert.training.optimization": (
            "LinearWarmupDecay",
            "OPTIMIZERS",
            "create_optimizer",
            "precision_policy",
            "resolve_precision",
        ),
        "kbert.training.precisions": ("PRECISIONS",),
        "kbert.training.progress_events": (
            "EpochFinished",
            "ProgressEvents",
            "StepFinished",
            "TrainingFinished",
            "TrainingStarted",
        ),
        "kbert.training.random_seed": ("set_random_seed",),
        "kbert.training.run_state": ("start_state",),
        "kbert.training.step_callback": ("StepCallback",),
        "kbert.training.training_callback": ("TrainingCallback",),
        "kbert.training.training_checkpoint": ("TrainingCheckpoint",),
    }
)

__all__ = sorted(_PUBLIC_NAMES)
__getattr__, __dir__ = lazy_attributes(__name__, _PUBLIC_NAMES)
