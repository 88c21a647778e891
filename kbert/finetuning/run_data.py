"""The examples a fine-tuning run trains and scores on, read by its task, labels checked."""

import os


def read_run_data(task, train, evaluation, patience=None):
    """`(train_examples, eval_examples, label_names)` of a run, the labels checked.

    Args:
        task: the run's `FineTuningRecipe`.
        train: a file the task reads, its example records, or a table as `fit` takes.
        evaluation: evaluation data in the same forms; None for none.
        patience: the run's early-stopping patience, which needs evaluation data.

    Raises:
        ValueError: when the evaluation data hold labels the training data lack, or
            early stopping has no evaluation data to watch.
    """
    train_examples, train_source = _examples(task, train, "the training data")
    eval_examples, eval_source = _examples(task, evaluation, "the evaluation data")
    label_names = task.label_names(train_examples, train_source)
    if eval_examples is not None:
        task.check_labels(eval_examples, label_names, eval_source)
    if patience is not None and eval_examples is None:
        raise ValueError(
            "`patience` (early stopping) needs evaluation data. Received: evaluation=None"
        )
    return train_examples, eval_examples, label_names


def _examples(task, data, default_source):
    """`(examples, source)`: a file's path names the source, other data `default_source`."""
    if data is None:
        return None, None
    if isinstance(data, (str, os.PathLike)):
        return task.read(data), str(data)
    return task.examples(data, default_source), default_source
