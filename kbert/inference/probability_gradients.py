"""Gradients of weighted label probabilities with respect to the token vectors.

The objective, written once in `keras.ops`: for each row, the sum of `weights *
softmax(logits)` (a one-hot row picks a class's probability; a tagger's weights
average the probabilities of an entity's word tags). Differentiation is the one thing
the backends do their own way, so each has a small module (`jax_gradients`,
`tensorflow_gradients`, `torch_gradients`) with the same `probability_gradients`.
Rows are independent (no dropout, no cross-row op), so the gradient of the rows' sum
is every row's own gradient.
"""

import importlib

import keras
from keras import ops

_BACKEND_MODULES = {
    "jax": "kbert.inference.jax_gradients",
    "tensorflow": "kbert.inference.tensorflow_gradients",
    "torch": "kbert.inference.torch_gradients",
}


def weighted_probabilities(logits, weights):
    """Per row, `sum(weights * softmax(logits))` in float32: (B,) from (B, ..., C)."""
    probabilities = ops.softmax(ops.cast(logits, "float32"), axis=-1)
    weighted = probabilities * ops.cast(weights, "float32")
    return ops.sum(ops.reshape(weighted, (ops.shape(weighted)[0], -1)), axis=1)


def probability_gradients(view, inputs, weights):
    """The objective and its gradient with respect to `inputs["token_vectors"]`.

    Args:
        view: a `TokenVectorsView` (`model.with_token_vectors()`).
        inputs: host arrays `token_vectors` (B, L, H) float32, `segment_ids` and
            `padding_mask` (B, L).
        weights: float32 host array shaped like the view's probabilities, (B, C)
            or (B, L, C).

    Returns:
        `(values, gradients)`: float32 arrays (B,) and (B, L, H).
    """
    backend = keras.config.backend()
    if backend not in _BACKEND_MODULES:
        raise ValueError(
            f"Gradient saliency runs on the JAX, TensorFlow and PyTorch backends. "
            f"Received: backend={backend!r}"
        )
    module = importlib.import_module(_BACKEND_MODULES[backend])
    return module.probability_gradients(view, inputs, weights)
