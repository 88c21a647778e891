"""What the benchmark workers report about their device: its name, whether it is an
accelerator, and the peak memory a workload used.

`framework` is the array library that runs the model: "jax", "tensorflow" or "torch".
"""


def uses_accelerator(framework):
    """True when `framework` runs on a GPU or TPU rather than the CPU."""
    if framework == "jax":
        import jax

        return jax.default_backend() != "cpu"
    if framework == "torch":
        import torch

        return torch.cuda.is_available()
    if framework == "tensorflow":
        import tensorflow as tf

        return bool(tf.config.list_logical_devices("GPU"))
    raise ValueError(f"Unknown framework {framework!r}: expected jax, tensorflow or torch.")


def device_description(framework):
    """The device's name as the framework reports it, e.g. "NVIDIA H200" or "cpu"."""
    if framework == "jax":
        import jax

        device = jax.devices()[0]
        return getattr(device, "device_kind", "") or device.platform
    if framework == "torch":
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    if framework == "tensorflow":
        import tensorflow as tf

        gpus = tf.config.list_physical_devices("GPU")
        if not gpus:
            return "cpu"
        return tf.config.experimental.get_device_details(gpus[0]).get("device_name", "GPU")
    raise ValueError(f"Unknown framework {framework!r}: expected jax, tensorflow or torch.")


def peak_memory_reader(framework):
    """Resets the device's peak-memory counter where the framework can; returns a
    function that reads the peak in bytes since then (None on a CPU, or where the
    framework keeps no such counter).

    JAX cannot reset its counter: its figure is the peak since the process started,
    which is why every workload runs in a process of its own.
    """
    if framework == "torch":
        import torch

        if not torch.cuda.is_available():
            return lambda: None
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        return lambda: int(torch.cuda.max_memory_allocated())
    if framework == "tensorflow":
        import tensorflow as tf

        if not tf.config.list_logical_devices("GPU"):
            return lambda: None
        tf.config.experimental.reset_memory_stats("GPU:0")
        return lambda: int(tf.config.experimental.get_memory_info("GPU:0")["peak"])
    if framework == "jax":
        import jax

        def read():
            stats = jax.devices()[0].memory_stats() or {}
            peak = stats.get("peak_bytes_in_use")
            return None if peak is None else int(peak)

        return read
    raise ValueError(f"Unknown framework {framework!r}: expected jax, tensorflow or torch.")
