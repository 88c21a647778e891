"""Multi-head self-attention with one fused dispatch.

Shape legend: B = batch, T = query length, S = key length, N = heads, D = head size,
H = hidden size (N * D).
"""

import keras
from keras import ops

from kbert.layers.host_truncated_normal import HostTruncatedNormal
from kbert.platform_support import float16_attention_needs_float32


@keras.saving.register_keras_serializable(package="kbert")
class BertSelfAttention(keras.layers.Layer):
    """BERT's multi-head self-attention.

    Queries, keys and values come from one fused projection (one matmul instead of
    three). The attention itself is a single call to `keras.ops.dot_product_attention`,
    which picks the backend's fused or flash kernel. The explicit softmax path runs
    only when the caller asks for the attention weights (the app shows them); it also
    applies attention-probability dropout, which the fused kernels do not offer.

    Args:
        hidden_size: model width H.
        num_heads: number of heads N; must divide `hidden_size`.
        attention_dropout: dropout on attention probabilities (explicit path only).
        initializer_range: standard deviation of the truncated-normal initialiser.

    Call arguments:
        x: float tensor (B, T, H).
        padding_mask: bool tensor (B, S); True marks real tokens.
        training: whether dropout is active.
        return_attention_weights: also return the (B, N, T, S) attention probabilities.

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

    def build(self, x_shape, padding_mask_shape=None):
        self.query_key_value.build(x_shape)
        self.output_projection.build(tuple(x_shape[:-1]) + (self.hidden_size,))
        self.built = True

    def call(self, x, padding_mask, training=None, return_attention_weights=False):
        qkv = self.query_key_value(x)  # (B, T, 3H)
        qkv = ops.reshape(qkv, (-1, ops.shape(x)[1], 3, self.num_heads, self.head_size))
        query, key, value = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]  # (B, T, N, D) each
        mask = ops.cast(padding_mask, "bool")[:, None, None, :]  # (B, 1, 1, S)

        if return_attention_weights:
            context, weights = self._explicit_attention(query, key, value, mask, training)
        else:
            context = self._fused_attention(query, key, value, mask)  # (B, T, N, D)
            weights = None
        context = ops.reshape(context, (-1, ops.shape(x)[1], self.hidden_size))  # (B, T, H)
        output = self.output_projection(context)
        if return_attention_weights:
            return output, weights
        return output

    def _fused_attention(self, query, key, value, mask):
        if self.compute_dtype == "float16" and float16_attention_needs_float32():
            query, key, value = (ops.cast(t, "float32") for t in (query, key, value))
            context = ops.dot_product_attention(query, key, value, mask=mask)
            return ops.cast(context, "float16")
        return ops.dot_product_attention(query, key, value, mask=mask)

    def _explicit_attention(self, query, key, value, mask, training):
        scale = 1.0 / float(self.head_size) ** 0.5
        scores = ops.einsum("btnd,bsnd->bnts", query, key)  # (B, N, T, S)
        # Softmax in float32 with float32's own minimum: safe under float16 and bfloat16,
        # where BERT's original -10000.0 constant overflows or loses the mask.
        scores = ops.cast(scores, "float32") * scale
        scores = ops.where(mask, scores, ops.cast(-3.4028234663852886e38, "float32"))
        weights = ops.softmax(scores, axis=-1)  # (B, N, T, S)
        dropped = self.probability_dropout(
            ops.cast(weights, self.compute_dtype), training=training
        )
        context = ops.einsum("bnts,bsnd->btnd", dropped, value)  # (B, T, N, D)
        return context, ops.cast(weights, self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update(
            hidden_size=self.hidden_size,
            num_heads=self.num_heads,
            attention_dropout=self.attention_dropout,
            initializer_range=self.initializer_range,
        )
        return config
