"""Sparse categorical accuracy that leaves out one label (BERT's -100 on ignored tokens)."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kbert")
class IgnoreClassAccuracy(keras.metrics.Mean):
    """Accuracy of `argmax(y_pred)` against integer `y_true`, skipping `ignore_class`.

    Keras' `SparseCategoricalAccuracy` has no `ignore_class` (its losses do): the
    token classifier's padding and sub-word continuations, labelled -100, would count
    as misses and pull the reported accuracy towards zero on short sentences. Here they
    count for nothing; a `sample_weight`, if given, multiplies in.

    Args:
        ignore_class: the label to leave out (default -100).
        name: the metric's name.
        dtype: the metric's dtype.

    Examples:

    >>> metric = IgnoreClassAccuracy()
    >>> metric.update_state([[1, -100]], [[[0.1, 0.9], [0.9, 0.1]]])
    >>> float(metric.result())
    1.0
    """

    def __init__(self, ignore_class=-100, name="accuracy", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.ignore_class = ignore_class

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.convert_to_tensor(y_true)
        y_pred = ops.convert_to_tensor(y_pred)
        y_true = ops.reshape(y_true, ops.shape(y_pred)[:-1])
        predicted = ops.argmax(y_pred, axis=-1)
        matches = ops.cast(ops.equal(predicted, ops.cast(y_true, predicted.dtype)), self.dtype)
        weight = ops.cast(ops.not_equal(y_true, self.ignore_class), self.dtype)
        if sample_weight is not None:
            weight = weight * ops.cast(sample_weight, self.dtype)
        # Mean reduces each row to its weighted mean and divides by the mean weight,
        # so the result is sum(matches * weight) / sum(weight) over every token.
        return super().update_state(matches, sample_weight=weight)

    def get_config(self):
        return {**super().get_config(), "ignore_class": self.ignore_class}
