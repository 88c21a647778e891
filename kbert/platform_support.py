"""Facts about the running backend and device that the layers must work around.

Kept out of `kbert.layers` so that the layers stay free of backend branches: they ask a
question here and get a yes or no.
"""

import functools

import keras


@functools.lru_cache(maxsize=None)
def float16_attention_needs_float32():
    """True where the fused attention kernel cannot run in float16.

    XLA:CPU cannot lower JAX's float16 attention (a float16 x float16 -> float32
    dot_general), so on JAX with a CPU device the float16 path upcasts q, k and v.
    GPUs and TPUs, and the other backends, run float16 attention natively.
    """
    if keras.config.backend() != "jax":
        return False
    import jax

    return jax.default_backend() == "cpu"
