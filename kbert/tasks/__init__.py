"""Fine-tuning shared by the CLI and the GUI: task adapters, data, optimiser, trainer.

Plain Keras underneath: `BucketedDataset` is a `keras.utils.PyDataset` for
`model.fit`, `create_optimizer` returns a `keras.optimizers.AdamW`, and `FineTuner`
calls `model.fit` with them, adding evaluation, best-model keeping, early stopping,
resumable checkpoints, progress callbacks and cancellation.
"""

from kbert.preprocessing.bucketed_dataset import BucketedDataset
from kbert.preprocessing.task_features import TaskFeatures
from kbert.tasks.cancellation_token import CancellationToken
from kbert.tasks.classification_task import ClassificationTask
from kbert.tasks.fine_tuner import FineTuner
from kbert.tasks.fine_tuning_callback import FineTuningCallback
from kbert.tasks.fine_tuning_config import FineTuningConfig
from kbert.tasks.fine_tuning_result import FineTuningResult
from kbert.tasks.fine_tuning_task import FineTuningTask
from kbert.tasks.optimization import LinearWarmupDecay
from kbert.tasks.optimization import PRECISIONS
from kbert.tasks.optimization import create_optimizer
from kbert.tasks.optimization import precision_policy
from kbert.tasks.optimization import resolve_precision
from kbert.tasks.question_answering_task import QuestionAnsweringTask
from kbert.tasks.task_registry import TASK_NAMES
from kbert.tasks.task_registry import make_task
from kbert.tasks.token_classification_task import TokenClassificationTask
from kbert.tasks.training_checkpoint import TrainingCheckpoint

__all__ = [
    "PRECISIONS",
    "TASK_NAMES",
    "BucketedDataset",
    "CancellationToken",
    "ClassificationTask",
    "FineTuner",
    "FineTuningCallback",
    "FineTuningConfig",
    "FineTuningResult",
    "FineTuningTask",
    "LinearWarmupDecay",
    "QuestionAnsweringTask",
    "TaskFeatures",
    "TokenClassificationTask",
    "TrainingCheckpoint",
    "create_optimizer",
    "make_task",
    "precision_policy",
    "resolve_precision",
]
