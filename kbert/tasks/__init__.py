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

_PUBLIC_NAMES = {
    "BucketedDataset": "kbert.preprocessing.bucketed_dataset",
    "CancellationToken": "kbert.training.cancellation_token",
    "ClassificationTask": "kbert.tasks.classification_task",
    "FineTuner": "kbert.tasks.fine_tuner",
    "FineTuningCallback": "kbert.tasks.fine_tuning_callback",
    "FineTuningConfig": "kbert.tasks.fine_tuning_config",
    "FineTuningResult": "kbert.tasks.fine_tuning_result",
    "FineTuningTask": "kbert.tasks.fine_tuning_task",
    "LinearWarmupDecay": "kbert.training.optimization",
    "PRECISIONS": "kbert.training.optimization",
    "QuestionAnsweringTask": "kbert.tasks.question_answering_task",
    "TASK_NAMES": "kbert.tasks.task_specs",
    "TASK_SPECS": "kbert.tasks.task_specs",
    "TaskFeatures": "kbert.preprocessing.task_features",
    "TaskSpec": "kbert.tasks.task_spec",
    "TokenClassificationTask": "kbert.tasks.token_classification_task",
    "TrainingCheckpoint": "kbert.training.training_checkpoint",
    "create_optimizer": "kbert.training.optimization",
    "make_task": "kbert.tasks.task_registry",
    "precision_policy": "kbert.training.optimization",
    "resolve_precision": "kbert.training.optimization",
    "task_spec": "kbert.tasks.task_specs",
    "training_data_fingerprint": "kbert.tasks.fine_tuner",
}

__all__ = sorted(_PUBLIC_NAMES)
__getattr__, __dir__ = lazy_attributes(__name__, _PUBLIC_NAMES)
