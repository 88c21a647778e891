"""Multi-head self-attention with one fused dispatch.

Shape legend: B = batch, T = query length, S = key length, N = heads, D = head size,
H = hidden size (N * D).
"""

import random

import keras
from keras import ops

from kbert.layers.attention_dispatch import dot_product_attention
from kbert.layers.attention_dispatch import explicit_attention
from kbert.layers.host_truncated_normal import HostTruncatedNormal


# The constructor arguments `get_config` returns, read from the attributes of the same names.
_CONFIG_NAMES = (
    "hidden_size", "num_heads", "attention_dropout", "initializer_range",
)


@keras.saving.register_keras_serializable(package="kbert")
class BertSelfAttention(keras.layers.Layer):
    """BERT's multi-head self-attention.

    Queries, keys and values come from one fused projection (one matmul instead of
    three). The attention itself is one call to
    `kbert.layers.attention_dispatch.dot_product_attention`, which reaches cuDNN's
    fused attention on JAX GPUs, PyTorch's `scaled_dot_product_attention`, and XLA's
    attention elsewhere (see there for which path applies attention-probability
    dropout how). The explicit softmax path runs when the caller asks for the
    attention weights (the app shows them).

    Args:
        hidden_size: model width H.
        num_heads: number of heads N; must divide `hidden_size`.
        attention_dropout: dropout on the attention probabilities, in training.
        initializer_range: standard deviation of the truncated-normal initialiser.

    Call arguments:
        x: float tensor (B, T, H).
        padding_mask: bool tensor (B, S); True marks real tokens.
        training: whether dropout is active.
        return_attention_weights: also return the (B, N, T, S) attention probabilities.
        attention_mask: optional bool tensor (B, 1, T, S) that replaces the padding
            mask's (packed rows: `kbert.layers.packed_sequences.packed_attention_mask`).

    Returns:
        (B, T, H) tensor, or a tuple with the attention weights as well.
    """

    def __init__(
        self,
        hidden_size,
        num_heads,
        attention_dropout=0.0,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if hidden_size % num_heads != 0:
            raise ValueError(
                "`hidden_size` must be divisible by `num_heads`. Received: "
                f"hidden_size={hidden_size}, num_heads={num_heads}"
            )
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_size = hidden_size // num_heads
        self.attention_dropout = attention_dropout
        self.initializer_range = initializer_range

        initializer = HostTruncatedNormal(stddev=initializer_range)
        self.query_key_value = keras.layers.Dense(
            3 * hidden_size,
            kernel_initializer=initializer,
            dtype=self.dtype_policy,
            name="query_key_value",
        )
        self.output_projection = keras.layers.Dense(
            hidden_size,
            kernel_initializer=initializer,
            dtype=self.dtype_policy,
            name="output_projection",
        )
        self.probability_dropout = keras.layers.Dropout(
            attention_dropout, dtype=self.dtype_policy, name="probability_dropout"
        )
        # The seed of kernels that draw their own dropout masks (cuDNN's). A Python
        # int, fixed when the layer is made, distinct per layer so that the layers'
        # masks are independent; `keras.utils.set_random_seed` makes it reproducible.
        self.kernel_seed = random.randint(1, 2**31 - 1) if attention_dropout > 0 else 0

    def build(self, x_shape, padding_mask_shape=None, attention_mask_shape=None):
        self.query_key_value.build(x_shape)
        self.output_projection.build(tuple(x_shape[:-1]) + (self.hidden_size,))
        self.built = True

    def call(
        self, x, padding_mask, training=None, return_attention_weights=False, attention_mask=None
    ):
        qkv = self.query_key_value(x)  # (B, T, 3H)
        qkv = ops.reshape(qkv, (-1, ops.shape(x)[1], 3, self.num_heads, self.head_size))
        query, key, value = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]  # (B, T, N, D) each
        padding_mask = ops.cast(padding_mask, "bool")  # (B, S)

        if return_attention_weights:
            context, weights = explicit_attention(
                query,
                key,
                value,
                padding_mask[:, None, None, :] if attention_mask is None else attention_mask,
                self.probability_dropout,
                training,
            )
        else:
            context = dot_product_attention(
                query,
                key,
                value,
                padding_mask,
                dropout_rate=self.attention_dropout,
                probability_dropout=self.probability_dropout,
                kernel_seed=self.kernel_seed,
                training=bool(training),
                attention_mask=attention_mask,
            )  # (B, T, N, D)
            weights = None
        context = ops.reshape(context, (-1, ops.shape(x)[1], self.hidden_size))  # (B, T, H)
        output = self.output_projection(context)
        if return_attention_weights:
            return output, weights
        return output

    def compute_output_spec(
        self, x, padding_mask, training=None, return_attention_weights=False, attention_mask=None
    ):
        # Stated, not traced: Keras traces a PyTorch layer on the "meta" device, where a
        # variable reads in its own dtype rather than the autocast one, so a traced
        # mixed_bfloat16 attention claimed float32 outputs while it returns bfloat16.
        output = keras.KerasTensor(tuple(x.shape[:-1]) + (self.hidden_size,), self.compute_dtype)
        if not return_attention_weights:
            return output  # (B, T, H)
        keys = padding_mask.shape[-1] if attention_mask is None else attention_mask.shape[-1]
        weights_shape = (x.shape[0], self.num_heads, x.shape[1], keys)  # (B, N, T, S)
        return output, keras.KerasTensor(weights_shape, self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update({name: getattr(self, name) for name in _CONFIG_NAMES})
        return config
