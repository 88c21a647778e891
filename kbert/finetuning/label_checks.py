"""Checks on the labels of training data, without Keras (the app's data preview runs them)."""


def check_several_labels(label_names, source, label_column):
    """Raises ValueError unless the training data holds at least two distinct labels.

    A classifier trained on one class learns nothing (its loss is 0 from the start),
    which usually means the label column is the wrong one.

    Args:
        label_names: the distinct labels of the training data.
        source: how to name the data in the message ("train.csv").
        label_column: the column the labels were read from.

    Raises:
        ValueError: naming the one label found and the column.
    """
    if len(label_names) >= 2:
        return
    found = f"a single label, {label_names[0]!r}," if label_names else "no labels"
    raise ValueError(
        f"{source} has {found} in column {label_column!r}: a classifier needs at least two "
        "classes. Choose the column that holds the labels, or add examples of the other "
        "classes."
    )
