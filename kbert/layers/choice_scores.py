"""Multiple choice: one score per choice, back in the shape of the examples."""

import keras
from keras import ops


class ChoiceScores(keras.layers.Layer):
    """Folds one score per row `(B * C, 1)` back into `(B, C)`, as `ChoiceRows` flattened.

    Call arguments:
        scores: a float tensor `(B * C, 1)` (a `Dense(1)` on each row).
        token_ids: the `(B, C, L)` input the rows came from (for B and C).

    Returns:
        `(B, C)` scores, choice `c` of example `b` at `[b, c]`.
    """

    def call(self, scores, token_ids):
        choices = ops.shape(token_ids)[1]
        return ops.reshape(scores, (-1, choices))  # (B, C)

    def compute_output_shape(self, scores_shape, token_ids_shape):
        return (token_ids_shape[0], token_ids_shape[1])
