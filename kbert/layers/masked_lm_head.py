import keras
from keras import ops

from kbert.layers.activations import get_activation
from kbert.layers.host_truncated_normal import HostTruncatedNormal


@keras.saving.register_keras_serializable(package="kbert")
class MaskedLMHead(keras.layers.Layer):
    """BERT's masked-LM head, evaluated only at the masked positions.

    Gathers the hidden states at `mask_positions`, applies dense + activation +
    LayerNorm, then scores every vocabulary entry against the token embedding matrix
    (weights tied to the backbone's input embedding) plus a per-token bias. Working on
    (B, P, H) instead of (B, L, H) is what keeps pretraining cheap: P is ~15% of L.

    Args:
        token_embedding: the backbone's `keras.layers.Embedding`, whose matrix is reused.
            The config holds it serialised: a head rebuilt alone from its config gets
            an embedding of its own, while task models rebuild their head on the
            backbone (`for_backbone`), which keeps the tie.
        activation: transform activation name ("gelu" is exact GELU).
        layer_norm_epsilon: LayerNorm epsilon.
        initializer_range: standard deviation of the truncated-normal initialiser.

    Call arguments:
        sequence_output: float tensor (B, L, H).
        mask_positions: int tensor (B, P) of positions to score.

    Returns:
        float32 logits (B, P, V).
    """

    def __init__(
        self,
        token_embedding,
        activation="gelu",
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.token_embedding = token_embedding
        self.activation = activation
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.activation_fn = get_activation(activation)
        self.hidden_size = token_embedding.output_dim
        self.vocabulary_size = token_embedding.input_dim
        self.transform_dense = keras.layers.Dense(
            self.hidden_size,
            kernel_initializer=HostTruncatedNormal(stddev=initializer_range),
            dtype=self.dtype_policy,
            name="transform_dense",
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )

    @classmethod
    def for_backbone(cls, backbone, activation=None, layer_norm_epsilon=None, **kwargs):
        """The head for `backbone`: tied to its token embedding, in its dtype policy.

        `activation` and `layer_norm_epsilon` default to the backbone's, as in BERT.
        """
        config = backbone.bert_config
        return cls(
            backbone.token_embedding,
            activation=config.activation if activation is None else activation,
            layer_norm_epsilon=(
                config.layer_norm_epsilon if layer_norm_epsilon is None else layer_norm_epsilon
            ),
            initializer_range=config.initializer_range,
            dtype=backbone.dtype_policy,
            **kwargs,
        )

    def build(self, sequence_output_shape, mask_positions_shape=None):
        if not self.token_embedding.built:
            # A head made alone may be given an unbuilt embedding; a task's head
            # shares the backbone's, built with it.
            self.token_embedding.build((None, None))
        shape = (None, None, self.hidden_size)
        self.transform_dense.build(shape)
        self.layer_norm.build(shape)
        self.output_bias = self.add_weight(
            name="output_bias", shape=(self.vocabulary_size,), initializer="zeros"
        )
        self.built = True

    def call(self, sequence_output, mask_positions):
        positions = ops.expand_dims(ops.cast(mask_positions, "int32"), axis=-1)  # (B, P, 1)
        x = ops.take_along_axis(sequence_output, positions, axis=1)  # (B, P, H)
        x = self.layer_norm(self.activation_fn(self.transform_dense(x)))
        embeddings = ops.cast(self.token_embedding.embeddings, self.compute_dtype)  # (V, H)
        # E @ x^T rather than x @ E^T: the same numbers, but XLA:CPU compiled x @ E^T
        # into a copy of the transposed (V, H) table on every call (94 MB at BERT-base,
        # ~55 ms of a ~85 ms fill-mask); E @ x^T reads the table in its own layout and
        # transposes only the small (B * P, V) product.
        batch, slots = ops.shape(x)[0], ops.shape(x)[1]
        flat = ops.reshape(x, (-1, ops.shape(x)[-1]))  # (B * P, H)
        logits = ops.transpose(ops.matmul(embeddings, ops.transpose(flat)))  # (B * P, V)
        logits = ops.reshape(logits, (batch, slots, -1))  # (B, P, V)
        logits = ops.cast(logits, "float32") + ops.cast(self.output_bias, "float32")
        return logits

    def compute_output_shape(self, sequence_output_shape, mask_positions_shape):
        return tuple(mask_positions_shape) + (self.vocabulary_size,)

    def compute_output_spec(self, sequence_output, mask_positions):
        return keras.KerasTensor(
            tuple(mask_positions.shape) + (self.vocabulary_size,), dtype="float32"
        )

    def get_config(self):
        # The embedding serialised, so that a head alone rebuilds from its config; a
        # task rebuilds its head on the backbone instead (see `token_embedding`).
        config = super().get_config()
        config.update(
            token_embedding=keras.layers.serialize(self.token_embedding),
            activation=self.activation,
            layer_norm_epsilon=self.layer_norm_epsilon,
            initializer_range=self.initializer_range,
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        token_embedding = config.pop("token_embedding", None)
        if not isinstance(token_embedding, dict):
            raise ValueError(
                "A MaskedLMHead config needs the serialised `token_embedding` its "
                f"`get_config` writes. Received: token_embedding={token_embedding!r}"
            )
        return cls(keras.layers.deserialize(token_embedding), **config)
