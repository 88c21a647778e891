"""kbert.metrics classification metrics: hand-checked values and scikit-learn parity."""

import math
import warnings

import numpy as np
import pytest

from kbert.metrics import accuracy, macro_f1, matthews_corrcoef


def test_hand_checked_values():
    y_true = [0, 0, 1, 1]
    y_pred = [0, 0, 0, 1]
    assert accuracy(y_true, y_pred) == 0.75
    # class 0: tp 2, fp 1, fn 0 -> 4/5; class 1: tp 1, fn 1 -> 2/3.
    assert macro_f1(y_true, y_pred) == pytest.approx((0.8 + 2 / 3) / 2, abs=1e-15)
    # binary MCC = (tp*tn - fp*fn) / sqrt((tp+fp)(tp+fn)(tn+fp)(tn+fn)) with tp 1, tn 2, fp 0, fn 1.
    assert matthews_corrcoef(y_true, y_pred) == pytest.approx(2 / math.sqrt(1 * 2 * 2 * 3), abs=1e-15)


def test_string_labels_and_perfect_and_inverse_predictions():
    labels = ["neg", "pos", "pos", "neutral"]
    assert accuracy(labels, labels) == 1.0
    assert macro_f1(labels, labels) == 1.0
    assert matthews_corrcoef(labels, labels) == 1.0
    assert matthews_corrcoef(["a", "b", "a", "b"], ["b", "a", "b", "a"]) == -1.0


def test_single_class_mcc_is_zero_not_nan():
    assert matthews_corrcoef([1, 1, 1], [1, 1, 1]) == 0.0
    assert matthews_corrcoef([0, 1, 0], [1, 1, 1]) == 0.0


def test_macro_f1_labels_argument():
    # "c" appears nowhere: it scores 0 and still counts in the mean; "x" is not a listed class
    # but is still a wrong prediction for "a".
    assert macro_f1(["a", "b", "a"], ["a", "b", "x"], labels=["a", "b", "c"]) == pytest.approx(
        (2 / 3 + 1.0 + 0.0) / 3, abs=1e-15
    )
    assert macro_f1([0, 1, 1], [0, 1, 0], labels=[1]) == pytest.approx(2 / 3, abs=1e-15)


@pytest.mark.parametrize(
    "y_true, y_pred, message",
    [
        ([0, 1], [0], "same length"),
        ([], [], "empty"),
        ([0, 1], ["0", "1"], "mix string and integer"),
        ([[0, 1]], [[0, 1]], "flat sequence"),
        ([0.5, 1.0], [0.5, 1.0], "integer or string"),
    ],
)
def test_bad_inputs_raise(y_true, y_pred, message):
    for metric in (accuracy, macro_f1, matthews_corrcoef):
        with pytest.raises(ValueError, match=message):
            metric(y_true, y_pred)


def test_bad_labels_argument_raises():
    with pytest.raises(ValueError, match="repeat"):
        macro_f1([0, 1], [0, 1], labels=[0, 0])
    with pytest.raises(ValueError, match="mix string and integer"):
        macro_f1([0, 1], [0, 1], labels=["0", "1"])


def _random_case(rng):
    num_classes = int(rng.integers(1, 7))
    size = int(rng.integers(1, 60))
    vocabulary = rng.permutation(30)[:num_classes]
    y_true = rng.choice(vocabulary, size=size)
    # Mostly right predictions, with some classes predicted that never occur in y_true.
    y_pred = np.where(
        rng.random(size) < 0.6, y_true, rng.choice(rng.permutation(30)[: num_classes + 1], size=size)
    )
    if rng.random() < 0.5:
        return [f"label_{value}" for value in y_true], [f"label_{value}" for value in y_pred]
    return y_true.tolist(), y_pred.tolist()


def test_randomised_cases_equal_sklearn():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    largest_difference = 0.0
    warnings.simplefilter("ignore")  # sklearn warns on single-class cases; pytest restores filters
    for _ in range(300):
        y_true, y_pred = _random_case(rng)
        pairs = [
            (accuracy(y_true, y_pred), sklearn_metrics.accuracy_score(y_true, y_pred)),
            (
                macro_f1(y_true, y_pred),
                sklearn_metrics.f1_score(y_true, y_pred, average="macro", zero_division=0),
            ),
            (matthews_corrcoef(y_true, y_pred), sklearn_metrics.matthews_corrcoef(y_true, y_pred)),
        ]
        labels = sorted(set(y_true))[:2] + (["label_99"] if isinstance(y_true[0], str) else [99])
        pairs.append(
            (
                macro_f1(y_true, y_pred, labels=labels),
                sklearn_metrics.f1_score(y_true, y_pred, labels=labels, average="macro", zero_division=0),
            )
        )
        for ours, theirs in pairs:
            largest_difference = max(largest_difference, abs(ours - theirs))
    assert largest_difference <= 1e-12
