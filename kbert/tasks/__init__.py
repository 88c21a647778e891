"""Fine-tuning shared by the CLI and the GUI: task specs and adapters, and the trainer.

Plain Keras underneath: `FineTuner` calls `model.fit` on a `BucketedDataset` with the
optimiser of `kbert.training.create_optimizer`, adding evaluation, best-model keeping,
early stopping, resumable checkpoints, progress callbacks and cancellation. What each
task is (its name, data, columns, head, metrics, probe) is declared once in
`kbert.tasks.task_specs`.

Names load lazily (`kbert.lazy_imports`): importing the task specs imports no Keras.
The training building blocks (`CancellationToken`, `create_optimizer`, ...) live in
`kbert.training` and are named here too, where fine-tuning code has always found them.
"""

from kbert.lazy_imports import lazy_attributes
from kbert.lazy_imports import names_by_module

_PUBLIC_NAMES = names_by_module(
    {
        "kbert.preprocessing.bucketed_dataset": ("BucketedDataset",),
        "kbert.preprocessing.task_features": ("TaskFeatures",),
        "kbert.tasks.classification_task": ("ClassificationTask",),
        "kbert.tasks.fine_tuner": ("FineTuner", "training_data_fingerprint"),
        "kbert.tasks.fine_tuning_callback": ("FineTuningCallback",),
        "kbert.tasks.fine_tuning_config": ("FineTuningConfig",),
        "kbert.tasks.fine_tuning_result": ("FineTuningResult",),
        "kbert.tasks.fine_tuning_task": ("FineTuningTask",),
        "kbert.tasks.question_answering_task": ("QuestionAnsweringTask",),
        "kbert.tasks.task_registry": ("make_task",),
        "kbert.tasks.task_spec": ("TaskSpec",),
        "kbert.tasks.task_specs": ("TASK_NAMES", "TASK_SPECS", "task_spec"),
        "kbert.tasks.token_classification_task": ("TokenClassificationTask",),
        "kbert.training.cancellation_token": ("CancellationToken",),
        "kbert.training.optimization": (
            "LinearWarmupDecay",
            "create_optimizer",
            "precision_policy",
            "resolve_precision",
        ),
        "kbert.training.precisions": ("PRECISIONS",),
        "kbert.training.training_checkpoint": ("TrainingCheckpoint",),
    }
)

__all__ = sorted(_PUBLIC_NAMES)
__getattr__, __dir__ = lazy_attributes(__name__, _PUBLIC_NAMES)
