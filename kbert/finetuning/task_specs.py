"""The tasks kbert fine-tunes on, declared once (no Keras import: see `TaskSpec`).

kbert's own tasks are written here; `register_task` adds another package's.
"""

from kbert.finetuning.task_spec import TaskSpec
from kbert.model_table import MODEL_CLASSES

TABLE_TYPES = ("csv", "tsv", "jsonl", "json", "ndjson")

BUILT_IN_TASKS = (
    TaskSpec(
        name="classification",
        title="Text classification",
        description="one label per text (CSV, TSV or JSON Lines)",
        data_kind="table",
        file_types=TABLE_TYPES,
        columns=(("text", "text"), ("label", "label")),
        head="BertClassifier",
        metrics=("accuracy", "macro_f1", "matthews_corrcoef"),
        probe_fields=("text",),
        recipe="kbert.finetuning.classification_recipe:ClassificationRecipe",
    ),
    TaskSpec(
        name="pair-classification",
        title="Text-pair classification",
        description="one label per pair of texts, e.g. entailment (CSV, TSV or JSON Lines)",
        data_kind="table",
        file_types=TABLE_TYPES,
        columns=(("text", "text"), ("pair", "pair"), ("label", "label")),
        head="BertClassifier",
        metrics=("accuracy", "macro_f1", "matthews_corrcoef"),
        probe_fields=("text", "pair"),
        recipe="kbert.finetuning.classification_recipe:ClassificationRecipe",
        recipe_options=(("pair_column", "pair"),),
    ),
    TaskSpec(
        name="token-classification",
        title="Token classification (CoNLL)",
        description="a tag per word, CoNLL format (named entities)",
        data_kind="conll",
        file_types=("conll", "txt", "iob", "bio", "tsv"),
        columns=(),
        head="BertTokenClassifier",
        metrics=("f1", "precision", "recall"),
        probe_fields=("text",),
        recipe="kbert.finetuning.token_classification_recipe:TokenClassificationRecipe",
    ),
    TaskSpec(
        name="qa",
        title="Question answering (SQuAD)",
        description="answer spans in a context, SQuAD v1.1/v2.0 JSON",
        data_kind="squad",
        file_types=("json",),
        columns=(),
        head="BertQuestionAnswerer",
        metrics=("exact_match", "f1"),
        probe_fields=("question", "context"),
        recipe="kbert.finetuning.question_answering_recipe:QuestionAnsweringRecipe",
        probe_options=(("top_k", 3),),
    ),
    TaskSpec(
        name="multiple-choice",
        title="Multiple choice (SWAG)",
        description="the right ending of a context among candidates, SWAG CSV "
        "(sent1, sent2, ending0..., label) or JSON Lines (context, endings, label)",
        data_kind="choices",
        file_types=("csv", "jsonl", "json", "ndjson"),
        columns=(),
        head="BertMultipleChoice",
        metrics=("accuracy",),
        probe_fields=("context", "endings"),
        recipe="kbert.finetuning.multiple_choice_recipe:MultipleChoiceRecipe",
    ),
    TaskSpec(
        name="masked-lm",
        title="Continued masked-LM pretraining",
        description="domain adaptation on plain text, one document per blank-line "
        "separated block (masked-LM and next sentence)",
        data_kind="text",
        file_types=("txt",),
        columns=(),
        head="BertPretrainer",
        metrics=("mlm_accuracy", "nsp_accuracy"),
        probe_fields=("text",),
        probe_options=(("top_k", 5),),
    ),
)
# Task name -> its spec: kbert's tasks, then those packages registered.
TASK_SPECS = {}
# The task names, in order (a live view: a task registered later is in it too).
TASK_NAMES = TASK_SPECS.keys()


def register_task(spec):
    """Adds `spec` (a `TaskSpec`) to the tasks `kbert finetune --task` and the app offer.

    The task's head must be a class of the model table (`kbert.model_table`, where
    `kbert.model_table.register_model_class` adds one), and its recipe a
    `FineTuningRecipe` subclass named "module:Class".

    Returns:
        `spec`.

    Raises:
        ValueError: when `spec` is not a `TaskSpec`, its name is taken, or its head is
            not in the model table.

    Example:

    >>> register_task(TaskSpec(name="regression", head="BertRegressor", ...))
    """
    if not isinstance(spec, TaskSpec):
        raise ValueError(
            f"`spec` must be a kbert.finetuning.TaskSpec. Received: spec={spec!r:.200}"
        )
    if spec.name in TASK_SPECS:
        raise ValueError(f"The task name {spec.name!r} is taken. Received: name={spec.name!r}")
    if spec.head not in MODEL_CLASSES:
        raise ValueError(
            f"The head of the task {spec.name!r} must be a class of kbert.model_table "
            f"({sorted(MODEL_CLASSES)}). Received: head={spec.head!r}"
        )
    TASK_SPECS[spec.name] = spec
    return spec


def task_spec(name):
    """The `TaskSpec` called `name`; a ValueError lists the task names."""
    if name not in TASK_SPECS:
        raise ValueError(f"`task` must be one of {tuple(TASK_SPECS)}. Received: task={name!r}")
    return TASK_SPECS[name]


def tasks_with_head(class_name):
    """The tasks whose model is of the class `class_name`, in table order (classification
    and pair classification for "BertClassifier"; none for a class no task trains)."""
    return tuple(spec for spec in TASK_SPECS.values() if spec.head == class_name)


for _spec in BUILT_IN_TASKS:
    register_task(_spec)
