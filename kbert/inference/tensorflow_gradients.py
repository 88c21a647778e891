"""`probability_gradients` on TensorFlow: a `GradientTape` inside a `tf.function`."""

import weakref

import numpy as np

from kbert.inference.probability_gradients import weighted_probabilities

# Per view, its traced gradient function (traced once per input shape).
_GRADIENT_FUNCTIONS = weakref.WeakKeyDictionary()


def probability_gradients(view, inputs, weights):
    """See `kbert.inference.probability_gradients.probability_gradients`."""
    import tensorflow as tf

    gradient_function = _GRADIENT_FUNCTIONS.get(view)
    if gradient_function is None:

        def gradient_step(inputs, weights):
            vectors = inputs["token_vectors"]
            with tf.GradientTape() as tape:
                tape.watch(vectors)
                values = weighted_probabilities(view(inputs), weights)  # (B,)
            return values, tape.gradient(values, vectors)

        gradient_function = tf.function(gradient_step)
        _GRADIENT_FUNCTIONS[view] = gradient_function
    tensors = {key: tf.convert_to_tensor(value) for key, value in inputs.items()}
    values, gradients = gradient_function(tensors, tf.convert_to_tensor(weights))
    return np.asarray(values, dtype=np.float32), np.asarray(gradients, dtype=np.float32)
