"""The one attention dispatch: the backend's fused kernel where it has one, XLA's otherwise.

Shape legend: B = batch, T = query length, S = key length, N = heads, D = head size.

`BertSelfAttention` calls `dot_product_attention` and nothing else. It is the only place
in `kbert.layers` that names a backend, because the kernels it reaches take arguments
`keras.ops.dot_product_attention` does not pass on (per-row key lengths, dropout):

- **JAX with cuDNN** (a CUDA GPU of compute capability 8.0 or newer, bfloat16 or
  float16 inputs): cuDNN's fused flash attention, `__cudnn$fmhaSoftmax` forward and
  `__cudnn$fmhaSoftmaxBackward` in the compiled step (`...Dropout...` with dropout).
  The padding mask reaches it as per-row key lengths counted from the mask, so
  padding must be on the right, as every kbert input pipeline pads; padded query
  rows still attend to the real keys, as on the other paths. A mask of shape
  (B, 1, 1, S), which is what Keras passes, is refused by cuDNN ("Bias must have same
  seq length as QKV") and Keras then silently runs the XLA path: that is why kbert
  does not go through Keras here. Attention-probability dropout is cuDNN's own
  (Philox): its seed is fixed per layer when the layer is made and XLA's runtime
  advances the offset on every execution, so every step draws new masks, but a new
  process (a resumed run) starts the stream again. Resuming on this path with
  `attention_dropout > 0` is therefore statistically, not bitwise, the same run.
- **PyTorch**: `torch.nn.functional.scaled_dot_product_attention` with the boolean
  mask, and `dropout_p` in training: flash, memory-efficient or cuDNN kernels on a GPU,
  the CPU flash kernel in inference. PyTorch's CPU kernels have no dropout, so CPU
  training with attention dropout runs PyTorch's math path.
- **Everything else** (JAX on a CPU, JAX float32 on a GPU, TensorFlow):
  `keras.ops.dot_product_attention`, which is XLA's einsum-softmax there; in training
  with attention dropout, the explicit softmax below with the layer's Keras `Dropout`
  (the same XLA operations plus the dropout; its seed state lives in the model's
  variables, so checkpoints resume it exactly).

Packed rows (several sequences per row, `attention_mask` given: block-diagonal, built
by `kbert.layers.packed_sequences.packed_attention_mask`) cannot be told to cuDNN as
key lengths, so on JAX they take the XLA path above, whatever the device and dtype
(logged once, at INFO level on a GPU and DEBUG on a CPU: it is what packing asks for,
not a misconfiguration).
PyTorch gives the (B, 1, T, S) mask to `scaled_dot_product_attention` (its
memory-efficient or math kernels; the flash kernel takes no mask), TensorFlow to
`keras.ops.dot_product_attention` as for padding.

When the cuDNN path is not taken on JAX the reason is logged once per reason: as a
warning where JAX runs on a GPU, at DEBUG level on a CPU, where cuDNN never runs.
"""

import logging

import keras
from keras import ops

from kbert.platform_support import float16_attention_needs_float32

logger = logging.getLogger("kbert.layers")

# float32's most negative value: masks without BERT's -10000.0, which overflows float16.
_FLOAT32_MIN = -3.4028234663852886e38

_logged_reasons = set()


def dot_product_attention(
    query,
    key,
    value,
    padding_mask,
    dropout_rate=0.0,
    probability_dropout=None,
    kernel_seed=0,
    training=False,
    attention_mask=None,
):
    """Scaled dot-product attention over the real keys of each row.

    Args:
        query: (B, T, N, D) tensor.
        key, value: (B, S, N, D) tensors, in the query's dtype.
        padding_mask: bool (B, S), True for real tokens, which come first in each row.
        dropout_rate: dropout on the attention probabilities, applied in training.
        probability_dropout: the Keras `Dropout` layer of `dropout_rate` that the
            explicit path applies (its seed state is the model's).
        kernel_seed: an int seed for kernels that draw their own dropout (cuDNN).
        training: whether dropout is active.
        attention_mask: None, or a bool (B, 1, T, S) mask used instead of the padding
            mask's (packed rows); it takes the XLA path on JAX (see the module notes).

    Returns:
        The (B, T, N, D) context, in the query's dtype.
    """
    rate = float(dropout_rate) if training else 0.0
    backend = keras.config.backend()
    if attention_mask is None:
        mask = padding_mask[:, None, None, :]  # (B, 1, 1, S)
    else:
        mask = ops.cast(attention_mask, "bool")  # (B, 1, T, S)
    if backend == "jax":
        if attention_mask is None:
            context = _cudnn_attention(query, key, value, padding_mask, rate, kernel_seed)
            if context is not None:
                return context
        else:
            _log_once(
                _fallback_level(on_accelerator=logging.INFO),
                "Attention runs on XLA's einsum-softmax path, not cuDNN: packed rows "
                "need a block-diagonal mask, which cuDNN's padding-length path cannot express.",
            )
    elif backend == "torch":
        return _torch_attention(query, key, value, mask, rate)
    if rate > 0.0:
        context, _ = explicit_attention(query, key, value, mask, probability_dropout, training)
        return context
    if _dtype(query) == "float16" and float16_attention_needs_float32():
        query, key, value = (ops.cast(t, "float32") for t in (query, key, value))
        return ops.cast(ops.dot_product_attention(query, key, value, mask=mask), "float16")
    return ops.dot_product_attention(query, key, value, mask=mask)  # (B, T, N, D)


def explicit_attention(query, key, value, mask, probability_dropout=None, training=False):
    """Attention with the probabilities materialised: `(context, weights)`.

    Args:
        query: (B, T, N, D); key, value: (B, S, N, D).
        mask: bool, broadcastable to (B, N, T, S).
        probability_dropout: a Keras `Dropout` for the probabilities, or None.
        training: whether dropout is active.

    Returns:
        The (B, T, N, D) context and the (B, N, T, S) probabilities before dropout,
        both in the query's dtype.
    """
    dtype = query.dtype
    scale = 1.0 / float(query.shape[-1]) ** 0.5
    scores = ops.einsum("btnd,bsnd->bnts", query, key)  # (B, N, T, S)
    # Softmax in float32 with float32's own minimum: safe under float16 and bfloat16,
    # where BERT's original -10000.0 constant overflows or loses the mask.
    scores = ops.cast(scores, "float32") * scale
    scores = ops.where(mask, scores, ops.cast(_FLOAT32_MIN, "float32"))
    weights = ops.cast(ops.softmax(scores, axis=-1), dtype)  # (B, N, T, S)
    dropped = weights
    if probability_dropout is not None:
        dropped = probability_dropout(weights, training=training)
    context = ops.einsum("bnts,bsnd->btnd", dropped, value)  # (B, T, N, D)
    return context, weights


def _cudnn_attention(query, key, value, padding_mask, rate, seed):
    """cuDNN fused attention on JAX, or None (with the reason logged) where it cannot run."""
    try:
        from jax._src.cudnn import fused_attention_stablehlo as cudnn
    except ImportError as error:
        return _decline(f"this JAX has no cuDNN fused attention ({error})")
    if _dtype(query) not in ("bfloat16", "float16"):
        return _decline(
            f"cuDNN fused attention needs bfloat16 or float16 inputs, these are "
            f"{query.dtype} (use precision 'auto' or 'mixed_bfloat16')"
        )
    try:
        cudnn.check_cudnn_version()
    except RuntimeError as error:
        return _decline(f"no cuDNN ({error})")
    if not cudnn.check_compute_capability("8.0"):
        return _decline("cuDNN flash attention needs a GPU of compute capability 8.0 or newer")
    import jax.numpy as jnp

    batch, query_length = query.shape[0], query.shape[1]
    # (B,) real keys per row; at least one, so that an all-padding row stays finite.
    key_lengths = jnp.maximum(jnp.sum(jnp.asarray(padding_mask, jnp.int32), axis=1), 1)
    query_lengths = jnp.full((batch,), query_length, dtype=jnp.int32)  # every query row
    try:
        return cudnn.dot_product_attention(
            query,
            key,
            value,
            q_seqlen=query_lengths,
            kv_seqlen=key_lengths,
            scale=1.0 / float(query.shape[-1]) ** 0.5,
            mask_type=cudnn.MaskType.PADDING,
            seed=int(seed),
            dropout_rate=rate,
            qkv_layout="BTNH",
        )  # (B, T, N, D)
    except (NotImplementedError, ValueError, TypeError, RuntimeError) as error:
        return _decline(f"cuDNN refused these inputs ({type(error).__name__}: {error})")


def _torch_attention(query, key, value, mask, rate):
    import torch

    # (B, N, T, D) for PyTorch; the boolean mask keeps the fused kernels eligible.
    query, key, value = (torch.transpose(t, 1, 2) for t in (query, key, value))
    mask = mask.to(torch.bool)  # (B, 1, 1, S), or (B, 1, T, S) for packed rows
    context = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=mask, dropout_p=rate
    )  # (B, N, T, D)
    return torch.transpose(context, 1, 2)  # (B, T, N, D)


def _dtype(tensor):
    return keras.backend.standardize_dtype(tensor.dtype)


def _decline(reason):
    _log_once(
        _fallback_level(on_accelerator=logging.WARNING),
        f"Attention runs on XLA's einsum-softmax path, not cuDNN: {reason}.",
    )
    return None


def _fallback_level(on_accelerator):
    """DEBUG on a CPU, where cuDNN never runs and the reason is no news; else `on_accelerator`."""
    import jax

    return logging.DEBUG if jax.default_backend() == "cpu" else on_accelerator


def _log_once(level, message):
    if message not in _logged_reasons:
        _logged_reasons.add(message)
        logger.log(level, message)
