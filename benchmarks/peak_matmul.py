"""The device's achievable matrix-multiply rate, the denominator of model-FLOPs utilisation.

A square bf16 matrix product on the GPU (float32 on a CPU, the smoke run), timed like
the workloads: median of repeated calls after warm-up, each waiting for its result.
Measured in the same run as the workloads rather than taken from a data sheet, so
that clocks, power limits and MIG slices are accounted for.
"""

from device_facts import device_description
from model_flops import matmul_flops
from timing import time_repeatedly

GPU_MATMUL_SIZE = 8192
CPU_MATMUL_SIZE = 1024
# A product takes about a millisecond on a large GPU: time enough of them that the
# clock has settled.
MINIMUM_REPEATS = 20


def run(framework, settings):
    """Times one matrix product with `framework` ("jax" or "torch")."""
    if framework == "torch":
        seconds, size, precision = _time_torch(settings)
    elif framework == "jax":
        seconds, size, precision = _time_jax(settings)
    else:
        raise ValueError(f"`framework` must be 'jax' or 'torch'. Received: {framework!r}")
    return {
        "seconds": seconds,
        "precision": precision,
        "matmul_size": size,
        "flops": matmul_flops(size),
        "device": device_description(framework),
    }


def _time_torch(settings):
    import torch

    on_gpu = torch.cuda.is_available()
    size = GPU_MATMUL_SIZE if on_gpu else CPU_MATMUL_SIZE
    dtype = torch.bfloat16 if on_gpu else torch.float32
    device = "cuda" if on_gpu else "cpu"
    generator = torch.Generator(device=device).manual_seed(settings["seed"])
    a = torch.randn(size, size, device=device, dtype=dtype, generator=generator)
    b = torch.randn(size, size, device=device, dtype=dtype, generator=generator)

    def product():
        result = a @ b
        if on_gpu:
            torch.cuda.synchronize()
        return result

    seconds = time_repeatedly(product, max(settings["repeats"], MINIMUM_REPEATS), settings["warmup"])
    return seconds, size, str(dtype).replace("torch.", "")


def _time_jax(settings):
    import jax
    import jax.numpy as jnp

    on_accelerator = jax.default_backend() != "cpu"
    size = GPU_MATMUL_SIZE if on_accelerator else CPU_MATMUL_SIZE
    dtype = jnp.bfloat16 if on_accelerator else jnp.float32
    key_a, key_b = jax.random.split(jax.random.key(settings["seed"]))
    a = jax.random.normal(key_a, (size, size), dtype=dtype)
    b = jax.random.normal(key_b, (size, size), dtype=dtype)
    multiply = jax.jit(jnp.matmul)
    seconds = time_repeatedly(
        lambda: multiply(a, b).block_until_ready(),
        max(settings["repeats"], MINIMUM_REPEATS),
        settings["warmup"],
    )
    return seconds, size, jnp.dtype(dtype).name
