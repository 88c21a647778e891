"""Multiple choice: the rows of every choice of every example, one after another."""

import keras
from keras import ops


class ChoiceRows(keras.layers.Layer):
    """Flattens `(B, C, L)` choice inputs into `(B * C, L)` rows for the encoder.

    Example `b`, choice `c` becomes row `b * C + c`, so `ChoiceScores` can fold the
    rows' scores back into `(B, C)`. No weights.

    Call arguments:
        inputs: an int tensor `(B, C, L)`.

    Returns:
        The same values as `(B * C, L)`.
    """

    def call(self, inputs):
        length = ops.shape(inputs)[2]
        return ops.reshape(inputs, (-1, length))  # (B*C, L)

    def compute_output_shape(self, input_shape):
        batch, choices, length = input_shape
        rows = None if batch is None or choices is None else batch * choices
        return (rows, length)
