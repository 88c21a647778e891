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


def runs_on_accelerator():
    """True when the backend computes on a GPU or TPU rather than the CPU."""
    backend = keras.config.backend()
    if backend == "jax":
        import jax

        return jax.default_backend() != "cpu"
    if backend == "torch":
        import torch

        return torch.cuda.is_available()
    if backend == "tensorflow":
        import tensorflow as tf

        return bool(tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("TPU"))
    return False


def describe_device():
    """The backend and the device that runs the model, in words, e.g. "JAX on CPU".

    For status lines (the desktop app shows it); asks the backend, never guesses.
    """
    backend = keras.config.backend()
    if backend == "jax":
        import jax

        device = jax.devices()[0]
        kind = getattr(device, "device_kind", "") or device.platform
        where = device.platform.upper() if device.platform == "cpu" else kind
        return f"JAX on {where}" + (f" (×{jax.device_count()})" if jax.device_count() > 1 else "")
    if backend == "torch":
        import torch

        if torch.cuda.is_available():
            return f"PyTorch on {torch.cuda.get_device_name(0)}"
        return "PyTorch on CPU"
    if backend == "tensorflow":
        import tensorflow as tf

        gpus = tf.config.list_logical_devices("GPU")
        return f"TensorFlow on {'GPU ' + gpus[0].name if gpus else 'CPU'}"
    return f"{backend} backend"
