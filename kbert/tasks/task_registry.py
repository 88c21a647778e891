"""Task names as the CLI and the GUI spell them, and the adapters behind them."""

import inspect

from kbert.tasks.classification_task import ClassificationTask
from kbert.tasks.question_answering_task import QuestionAnsweringTask
from kbert.tasks.token_classification_task import TokenClassificationTask

TASK_NAMES = ("classification", "pair-classification", "token-classification", "qa")

_TASK_CLASSES = {
    "classification": ClassificationTask,
    "pair-classification": ClassificationTask,
    "token-classification": TokenClassificationTask,
    "qa": QuestionAnsweringTask,
}


def make_task(name, **options):
    """The task adapter for `name`, one of `TASK_NAMES`.

    Args:
        name: the task name.
        **options: constructor arguments of the task's class; None values are
            dropped (they mean "the default"). "pair-classification" reads the second
            text from `pair_column`, "pair" unless given.

    Example:

    >>> make_task("pair-classification", text_column="premise", pair_column="hypothesis")
    """
    if name not in _TASK_CLASSES:
        raise ValueError(f"`task` must be one of {TASK_NAMES}. Received: task={name!r}")
    options = {key: value for key, value in options.items() if value is not None}
    task_class = _TASK_CLASSES[name]
    if name == "classification" and "pair_column" in options:
        raise ValueError(
            "`pair_column` is for the task 'pair-classification'. "
            f"Received: task={name!r}, pair_column={options['pair_column']!r}"
        )
    if name == "pair-classification":
        options.setdefault("pair_column", "pair")
    accepted = set(inspect.signature(task_class).parameters)
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ValueError(
            f"The task {name!r} takes the options {sorted(accepted)}. Received: {unknown}"
        )
    return task_class(**options)
