import keras
from keras import ops

from kbert.layers.host_truncated_normal import HostTruncatedNormal


# The constructor arguments `get_config` returns, read from the attributes of the same names.
_CONFIG_NAMES = (
    "vocabulary_size", "hidden_size", "max_positions", "type_vocabulary_size", "dropout",
    "layer_norm_epsilon", "initializer_range",
)


@keras.saving.register_keras_serializable(package="kbert")
class BertEmbeddings(keras.layers.Layer):
    """Token + learned absolute position + segment embeddings, then LayerNorm and dropout.

    Args:
        vocabulary_size: number of token ids.
        hidden_size: embedding width.
        max_positions: number of position embeddings; longer inputs are an error.
        type_vocabulary_size: number of segment ids.
        dropout: dropout rate applied after the LayerNorm.
        layer_norm_epsilon: LayerNorm epsilon.
        initializer_range: standard deviation of the truncated-normal initialiser.

    Call arguments:
        token_ids: int tensor (B, L).
        segment_ids: int tensor (B, L).
        position_ids: optional int tensor (B, L) of the positions to embed (packed rows
            restart them at every sequence); None for 0, 1, ..., L - 1.
        training: whether dropout is active.

    Returns:
        Float tensor (B, L, hidden_size).
    """

    def __init__(
        self,
        vocabulary_size,
        hidden_size,
        max_positions,
        type_vocabulary_size,
        dropout=0.1,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.hidden_size = hidden_size
        self.max_positions = max_positions
        self.type_vocabulary_size = type_vocabulary_size
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range

        initializer = HostTruncatedNormal(stddev=initializer_range)
        self.token_embedding = keras.layers.Embedding(
            vocabulary_size,
            hidden_size,
            embeddings_initializer=initializer,
            dtype=self.dtype_policy,
            name="token_embedding",
        )
        self.segment_embedding = keras.layers.Embedding(
            type_vocabulary_size,
            hidden_size,
            embeddings_initializer=initializer,
            dtype=self.dtype_policy,
            name="segment_embedding",
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )
        self.dropout_layer = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy, name="dropout"
        )

    def build(self, token_ids_shape, segment_ids_shape=None, position_ids_shape=None):
        self.token_embedding.build(token_ids_shape)
        self.segment_embedding.build(token_ids_shape)
        self.position_embeddings = self.add_weight(
            name="position_embeddings",
            shape=(self.max_positions, self.hidden_size),
            initializer=HostTruncatedNormal(stddev=self.initializer_range),
        )
        self.layer_norm.build(tuple(token_ids_shape) + (self.hidden_size,))
        self.built = True

    def call(self, token_ids, segment_ids, position_ids=None, training=None):
        return self.combine(self.token_embedding(token_ids), segment_ids, position_ids, training)

    def combine(self, token_vectors, segment_ids, position_ids=None, training=None):
        """The embeddings' output from token vectors already looked up (B, L, H).

        `call` looks the vectors up from the ids; saliency methods that differentiate
        with respect to the token embeddings (or blend them with a baseline) give them
        here. Position and segment embeddings, LayerNorm and dropout are `call`'s.
        """
        sequence_length = token_vectors.shape[1]
        if sequence_length is not None and sequence_length > self.max_positions:
            raise ValueError(
                f"Sequences may be at most {self.max_positions} tokens long (the model's "
                f"`max_positions`). Received: sequence_length={sequence_length}"
            )
        if sequence_length is None:
            sequence_length = ops.shape(token_vectors)[1]
        positions = ops.cast(self.position_embeddings, self.compute_dtype)
        token_vectors = ops.cast(token_vectors, self.compute_dtype)
        x = token_vectors + self.segment_embedding(segment_ids)  # (B, L, H)
        if position_ids is None:
            x = x + positions[:sequence_length][None, :, :]  # (1, L, H)
        else:
            x = x + ops.take(positions, ops.cast(position_ids, "int32"), axis=0)  # (B, L, H)
        x = self.layer_norm(x)
        return self.dropout_layer(x, training=training)

    def compute_output_shape(
        self, token_ids_shape, segment_ids_shape=None, position_ids_shape=None
    ):
        return tuple(token_ids_shape) + (self.hidden_size,)

    def get_config(self):
        config = super().get_config()
        config.update({name: getattr(self, name) for name in _CONFIG_NAMES})
        return config
