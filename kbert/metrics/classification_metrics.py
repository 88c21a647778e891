"""Sentence-level classification metrics: accuracy, macro F1 and Matthews correlation.

All three take two equally long sequences of labels (ints or strings) and agree with
scikit-learn's `accuracy_score`, `f1_score(average="macro")` and `matthews_corrcoef`.
They need only numpy.
"""

import numpy as np

__all__ = ["accuracy", "macro_f1", "matthews_corrcoef"]


def _label_array(values, name):
    """A 1-D numpy array of labels, rejecting empty, nested and None inputs."""
    array = np.asarray(list(values))
    if array.ndim != 1:
        raise ValueError(f"`{name}` must be a flat sequence of labels. Received shape {array.shape}.")
    if len(array) == 0:
        raise ValueError(f"`{name}` is empty; a score needs at least one label.")
    if array.dtype.kind not in "iubU":
        raise ValueError(
            f"`{name}` must hold integer or string labels. Received dtype {array.dtype} "
            f"(first values: {array[:3].tolist()})."
        )
    return array


def _check_same_label_kind(first, second):
    """Rejects string labels compared with integer ones, which numpy would silently turn
    into matching strings ("1" == 1)."""
    (first_name, first_array), (second_name, second_array) = first, second
    if (first_array.dtype.kind == "U") != (second_array.dtype.kind == "U"):
        raise ValueError(
            f"`{first_name}` and `{second_name}` mix string and integer labels. Received "
            f"{first_name}[:3]={first_array[:3].tolist()}, {second_name}[:3]={second_array[:3].tolist()}."
        )


def _encode_pair(y_true, y_pred, labels=None):
    """Encodes both label sequences as indices into one sorted label list.

    Returns:
        `(true_ids, pred_ids, num_classes)`; with `labels` given, ids index `labels`, and a
        label outside it gets the id `num_classes` (counted nowhere but present in the data).
    """
    true_array = _label_array(y_true, "y_true")
    pred_array = _label_array(y_pred, "y_pred")
    if true_array.shape != pred_array.shape:
        raise ValueError(
            f"`y_true` and `y_pred` must have the same length. Received {len(true_array)} and "
            f"{len(pred_array)}."
        )
    _check_same_label_kind(("y_true", true_array), ("y_pred", pred_array))
    if labels is None:
        vocabulary, ids = np.unique(np.concatenate([true_array, pred_array]), return_inverse=True)
        return ids[: len(true_array)], ids[len(true_array) :], len(vocabulary)
    label_array = _label_array(labels, "labels")
    _check_same_label_kind(("labels", label_array), ("y_true", true_array))
    if len(np.unique(label_array)) != len(label_array):
        raise ValueError(f"`labels` must not repeat a label. Received labels={label_array.tolist()}.")
    order = np.argsort(label_array, kind="stable")
    sorted_labels = label_array[order]

    def lookup(values):
        positions = np.clip(np.searchsorted(sorted_labels, values), 0, len(sorted_labels) - 1)
        found = sorted_labels[positions] == values
        return np.where(found, order[positions], len(label_array))

    return lookup(true_array), lookup(pred_array), len(label_array)


def accuracy(y_true, y_pred):
    """Fraction of positions where the prediction equals the gold label.

    Args:
        y_true: sequence of gold labels (ints or strings).
        y_pred: sequence of predicted labels, same length and kind as `y_true`.

    Returns:
        float in [0, 1].

    Examples:
    >>> accuracy(["pos", "neg", "pos"], ["pos", "pos", "pos"])
    0.6666666666666666
    """
    true_ids, pred_ids, _ = _encode_pair(y_true, y_pred)
    return float(np.mean(true_ids == pred_ids))


def macro_f1(y_true, y_pred, labels=None):
    """Unweighted mean over classes of the per-class F1, as `sklearn.metrics.f1_score(average="macro")`.

    A class that is neither gold nor predicted anywhere (possible only through `labels`)
    scores 0 and still counts in the mean, as in scikit-learn.

    Args:
        y_true: sequence of gold labels (ints or strings).
        y_pred: sequence of predicted labels, same length and kind as `y_true`.
        labels: the classes to average over; default: every label seen in either sequence.
            Positions whose labels are outside `labels` still count as false positives or
            false negatives of the listed classes.

    Returns:
        float in [0, 1].

    Examples:
    >>> macro_f1([0, 0, 1, 1], [0, 0, 0, 1])
    0.7333333333333334
    """
    true_ids, pred_ids, num_classes = _encode_pair(y_true, y_pred, labels)
    true_positives = np.bincount(true_ids[true_ids == pred_ids], minlength=num_classes + 1)
    true_totals = np.bincount(true_ids, minlength=num_classes + 1)
    pred_totals = np.bincount(pred_ids, minlength=num_classes + 1)
    numerator = 2.0 * true_positives[:num_classes]
    denominator = (true_totals + pred_totals)[:num_classes].astype(np.float64)
    per_class = np.divide(numerator, denominator, out=np.zeros(num_classes), where=denominator > 0)
    return float(np.mean(per_class))


def matthews_corrcoef(y_true, y_pred):
    """Multi-class Matthews correlation coefficient (Gorodkin's R_K), as scikit-learn defines it.

    Returns 0.0 when either sequence holds a single class (the coefficient is undefined there).

    Args:
        y_true: sequence of gold labels (ints or strings).
        y_pred: sequence of predicted labels, same length and kind as `y_true`.

    Returns:
        float in [-1, 1].

    Examples:
    >>> matthews_corrcoef([1, 1, 1, -1], [1, -1, 1, 1])
    -0.3333333333333333
    """
    true_ids, pred_ids, num_classes = _encode_pair(y_true, y_pred)
    # float64 throughout: the products below overflow int64 near a million samples.
    true_totals = np.bincount(true_ids, minlength=num_classes).astype(np.float64)
    pred_totals = np.bincount(pred_ids, minlength=num_classes).astype(np.float64)
    num_correct = float(np.count_nonzero(true_ids == pred_ids))
    num_samples = float(len(true_ids))
    covariance_true_pred = num_correct * num_samples - np.dot(true_totals, pred_totals)
    covariance_pred_pred = num_samples**2 - np.dot(pred_totals, pred_totals)
    covariance_true_true = num_samples**2 - np.dot(true_totals, true_totals)
    denominator = covariance_pred_pred * covariance_true_true
    if denominator == 0:
        return 0.0
    return float(covariance_true_pred / np.sqrt(denominator))
