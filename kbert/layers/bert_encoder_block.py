import keras

from kbert.layers.activations import get_activation
from kbert.layers.bert_self_attention import BertSelfAttention
from kbert.layers.host_truncated_normal import HostTruncatedNormal


# The constructor arguments `get_config` returns, read from the attributes of the same names.
_CONFIG_NAMES = (
    "hidden_size", "num_heads", "intermediate_size", "hidden_dropout", "attention_dropout",
    "layer_norm_epsilon", "activation", "initializer_range",
)


@keras.saving.register_keras_serializable(package="kbert")
class BertEncoderBlock(keras.layers.Layer):
    """One post-LayerNorm transformer encoder block, as in BERT.

    `x = LayerNorm(x + Dropout(SelfAttention(x)))`, then
    `x = LayerNorm(x + Dropout(Dense(activation(Dense(x)))))`.

    Args:
        hidden_size: model width H.
        num_heads: attention heads.
        intermediate_size: feed-forward width.
        hidden_dropout: dropout on both residual branches.
        attention_dropout: dropout on the attention probabilities, in training.
        layer_norm_epsilon: LayerNorm epsilon.
        activation: feed-forward activation name ("gelu" is the exact erf GELU).
        initializer_range: standard deviation of the truncated-normal initialiser.

    Call arguments:
        x: float tensor (B, L, H).
        padding_mask: bool tensor (B, L).
        training: whether dropout is active.
        return_attention_weights: also return the (B, N, L, L) attention probabilities.
        attention_mask: optional bool tensor (B, 1, L, L) for packed rows (see
            `BertSelfAttention`).
    """

    def __init__(
        self,
        hidden_size,
        num_heads,
        intermediate_size,
        hidden_dropout=0.1,
        attention_dropout=0.1,
        layer_norm_epsilon=1e-12,
        activation="gelu",
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.intermediate_size = intermediate_size
        self.hidden_dropout = hidden_dropout
        self.attention_dropout = attention_dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.activation = activation
        self.initializer_range = initializer_range
        self.activation_fn = get_activation(activation)

        initializer = HostTruncatedNormal(stddev=initializer_range)
        policy = self.dtype_policy
        self.self_attention = BertSelfAttention(
            hidden_size,
            num_heads,
            attention_dropout=attention_dropout,
            initializer_range=initializer_range,
            dtype=policy,
            name="self_attention",
        )
        self.attention_dropout_layer = keras.layers.Dropout(
            hidden_dropout, dtype=policy, name="attention_output_dropout"
        )
        self.attention_layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=policy, name="attention_layer_norm"
        )
        self.intermediate_dense = keras.layers.Dense(
            intermediate_size,
            kernel_initializer=initializer,
            dtype=policy,
            name="intermediate_dense",
        )
        self.output_dense = keras.layers.Dense(
            hidden_size, kernel_initializer=initializer, dtype=policy, name="output_dense"
        )
        self.output_dropout = keras.layers.Dropout(
            hidden_dropout, dtype=policy, name="output_dropout"
        )
        self.output_layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=policy, name="output_layer_norm"
        )

    def build(self, x_shape, padding_mask_shape=None, attention_mask_shape=None):
        x_shape = tuple(x_shape)
        self.self_attention.build(x_shape)
        self.attention_layer_norm.build(x_shape)
        self.intermediate_dense.build(x_shape)
        self.output_dense.build(x_shape[:-1] + (self.intermediate_size,))
        self.output_layer_norm.build(x_shape)
        self.built = True

    def call(
        self, x, padding_mask, training=None, return_attention_weights=False, attention_mask=None
    ):
        attended = self.self_attention(
            x,
            padding_mask,
            training=training,
            return_attention_weights=return_attention_weights,
            attention_mask=attention_mask,
        )
        if return_attention_weights:
            attended, weights = attended
        x = self.attention_layer_norm(
            x + self.attention_dropout_layer(attended, training=training)
        )
        hidden = self.activation_fn(self.intermediate_dense(x))  # (B, L, intermediate)
        hidden = self.output_dropout(self.output_dense(hidden), training=training)
        x = self.output_layer_norm(x + hidden)
        if return_attention_weights:
            return x, weights
        return x

    def compute_output_spec(self, x, padding_mask, return_attention_weights=False, **kwargs):
        # A block keeps its input's shape. Said here, a functional graph's symbolic call
        # does not trace the whole block through JAX: building the 4-block demo took
        # 0.2 s less of the app's start (the weights-returning call is traced as before).
        if return_attention_weights:
            return super().compute_output_spec(
                x, padding_mask, return_attention_weights=True, **kwargs
            )
        return keras.KerasTensor(x.shape, dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update({name: getattr(self, name) for name in _CONFIG_NAMES})
        return config
