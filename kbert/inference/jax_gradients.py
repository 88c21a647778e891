"""`probability_gradients` on JAX: `jax.grad` of the view's stateless call, jitted."""

import weakref

import numpy as np

from kbert.inference.probability_gradients import weighted_probabilities

# Per view, its jitted gradient function (compiled once per input shape).
_GRADIENT_FUNCTIONS = weakref.WeakKeyDictionary()


def probability_gradients(view, inputs, weights):
    """See `kbert.inference.probability_gradients.probability_gradients`."""
    gradient_function = _GRADIENT_FUNCTIONS.get(view)
    if gradient_function is None:
        import jax

        def total(vectors, trainable, non_trainable, others, weights):
            logits, _ = view.stateless_call(
                trainable, non_trainable, {**others, "token_vectors": vectors}
            )
            values = weighted_probabilities(logits, weights)  # (B,)
            return values.sum(), values

        gradient_function = jax.jit(jax.grad(total, has_aux=True))
        _GRADIENT_FUNCTIONS[view] = gradient_function
    others = {key: value for key, value in inputs.items() if key != "token_vectors"}
    gradients, values = gradient_function(
        inputs["token_vectors"],
        [variable.value for variable in view.trainable_variables],
        [variable.value for variable in view.non_trainable_variables],
        others,
        weights,
    )
    return np.asarray(values, dtype=np.float32), np.asarray(gradients, dtype=np.float32)
