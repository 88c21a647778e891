"""Which attention kernel a benchmark cell really ran, read off what was executed.

- XLA engines (JAX, TensorFlow with jit_compile): the optimised HLO that XLA dumped
  while compiling the cell (`--xla_dump_to`, set by `gpu_benchmark.py` for every XLA
  worker), searched for cuDNN's fused-attention custom calls (`__cudnn$fmha...`).
  Without one, attention is XLA's own softmax and matrix products.
- PyTorch engines: the operators of one profiled step, where
  `scaled_dot_product_attention` shows which backend it dispatched to (flash,
  memory-efficient, cuDNN, or the math path that materialises the probabilities).
"""

import pathlib
import re

XLA_DUMP_FLAGS = "--xla_dump_to={folder} --xla_dump_hlo_as_text"

_CUDNN_ATTENTION = re.compile(r'custom_call_target="(__cudnn\$fmha\w*)"')

# PyTorch operators of each scaled_dot_product_attention backend.
_TORCH_BACKENDS = (
    ("_scaled_dot_product_flash_attention", "flash (SDPA)"),
    ("_scaled_dot_product_efficient_attention", "memory-efficient (SDPA)"),
    ("_scaled_dot_product_cudnn_attention", "cuDNN (SDPA)"),
    ("_scaled_dot_product_fused_attention_overrideable", "fused (SDPA)"),
    ("_scaled_dot_product_attention_math", "math (SDPA, probabilities materialised)"),
)


def xla_attention(dump_folder):
    """The attention implementation in the optimised HLO under `dump_folder`, in words."""
    folder = pathlib.Path(dump_folder)
    files = sorted(folder.glob("*after_optimizations.txt"))
    if not files:
        return "unknown (no HLO dump)"
    targets = set()
    for path in files:
        targets.update(_CUDNN_ATTENTION.findall(path.read_text(errors="replace")))
    if targets:
        return "cuDNN fused: " + ", ".join(sorted(targets))
    return "XLA softmax (no fused kernel)"


def torch_attention(step):
    """Runs `step()` once under PyTorch's profiler; the SDPA backends it used, in words."""
    import torch

    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as profile:
        step()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    names = {event.key for event in profile.key_averages()}
    found = [label for operator, label in _TORCH_BACKENDS if any(operator in n for n in names)]
    if found:
        return ", ".join(found)
    if any("scaled_dot_product_attention" in name for name in names):
        return "SDPA (backend not named in the profile)"
    return "no SDPA call (explicit softmax)"
