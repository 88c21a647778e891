"""Fine-tuning shared by the CLI and the GUI: task specs, task recipes and the trainer.

Plain Keras underneath: `FineTuner` calls `model.fit` on a `BucketedDataset` with the
optimiser of `kbert.training.create_optimizer`, adding evaluation, best-model keeping,
early stopping, resumable checkpoints, progress callbacks and cancellation. What each
task is (its name, data, columns, head, metrics, probe) is declared once in
`kbert.finetuning.task_specs`; `FineTuningSearch` runs a grid of `FineTuner`s (the
paper's search) on an Optuna study several processes share; a `FineTuningRecipe` per task reads its data, builds its
features and scores a model (`make_recipe(name)` gives the one for a task name).

May import `kbert.training`, `kbert.models`, `kbert.preprocessing`, `kbert.inference`,
`kbert.data` and `kbert.metrics`. Names load lazily (`kbert.lazy_imports`): importing
the task specs imports no Keras.
"""

from kbert.lazy_imports import lazy_attributes
from kbert.lazy_imports import names_by_module

_PUBLIC_NAMES = names_by_module(
    {
        "kbert.finetuning.recipe_registry": ("make_recipe",),
        "kbert.finetuning.classification_recipe": ("ClassificationRecipe",),
        "kbert.finetuning.evaluation_predictions": ("EvaluationPredictions",),
        "kbert.finetuning.fine_tuner": ("FineTuner",),
        "kbert.finetuning.fine_tuning_recipe": ("FineTuningRecipe",),
        "kbert.finetuning.fine_tuning_config": ("FineTuningConfig",),
        "kbert.finetuning.fine_tuning_result": ("FineTuningResult",),
        "kbert.finetuning.fine_tuning_search": ("FineTuningSearch",),
        "kbert.finetuning.multiple_choice_recipe": ("MultipleChoiceRecipe",),
        "kbert.finetuning.question_answering_recipe": ("QuestionAnsweringRecipe",),
        "kbert.finetuning.resume_identity": ("training_data_fingerprint",),
        "kbert.finetuning.search_result": ("SearchResult",),
        "kbert.finetuning.search_space": ("SearchSpace",),
        "kbert.finetuning.task_spec": ("TaskSpec",),
        "kbert.finetuning.task_specs": ("TASK_NAMES", "TASK_SPECS", "register_task", "task_spec"),
        "kbert.finetuning.token_classification_recipe": ("TokenClassificationRecipe",),
    }
)

__all__ = sorted(_PUBLIC_NAMES)
__getattr__, __dir__ = lazy_attributes(__name__, _PUBLIC_NAMES)
