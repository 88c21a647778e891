"""The task recipes behind the task names (`kbert.finetuning.task_specs`)."""

import inspect

from kbert.finetuning.task_specs import task_spec


def make_recipe(name, **options):
    """The task recipe for `name`, one of `TASK_NAMES` other than "masked-lm".

    Args:
        name: the task name.
        **options: constructor arguments of the task's class; None values are
            dropped (they mean "the default"). "pair-classification" reads the second
            text from `pair_column`, "pair" unless given.

    Example:

    >>> make_recipe("pair-classification", text_column="premise", pair_column="hypothesis")
    """
    spec = task_spec(name)
    if spec.runs_pretraining:
        raise ValueError(
            f"The task {name!r} is continued pretraining, run by "
            "kbert.pretraining.ContinuedPretraining (`kbert finetune --task masked-lm`), "
            "not by a FineTuner task recipe."
        )
    options = {key: value for key, value in options.items() if value is not None}
    roles = {role for role, _ in spec.columns}
    if "pair_column" in options and "pair" not in roles:
        raise ValueError(
            "`pair_column` is for the task 'pair-classification'. "
            f"Received: task={name!r}, pair_column={options['pair_column']!r}"
        )
    for key, value in spec.recipe_options:
        options.setdefault(key, value)
    task_class = spec.recipe_class()
    accepted = set(inspect.signature(task_class).parameters)
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ValueError(
            f"The task {name!r} takes the options {sorted(accepted)}. Received: {unknown}"
        )
    return task_class(**options)
