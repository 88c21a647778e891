import keras
from keras import ops

from kbert.layers.host_truncated_normal import HostTruncatedNormal


@keras.saving.register_keras_serializable(package="kbert")
class BertPooler(keras.layers.Layer):
    """Dense + tanh on the first ([CLS]) token: BERT's sentence representation.

    Packed rows hold several sequences, each with its own [CLS]: `cls_positions` names
    them and the pooler reads every one.

    Args:
        hidden_size: model width H.
        initializer_range: standard deviation of the truncated-normal initialiser.

    Call arguments:
        sequence_output: float tensor (B, L, H).
        cls_positions: optional int tensor (B, P), the [CLS] positions of packed
            sequences; None for position 0 only.

    Returns:
        Float tensor (B, H), or (B, P, H) with `cls_positions`.
    """

    def __init__(self, hidden_size, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.initializer_range = initializer_range
        self.dense = keras.layers.Dense(
            hidden_size,
            activation="tanh",
            kernel_initializer=HostTruncatedNormal(stddev=initializer_range),
            dtype=self.dtype_policy,
            name="dense",
        )

    def build(self, sequence_output_shape, cls_positions_shape=None):
        self.dense.build((sequence_output_shape[0], sequence_output_shape[-1]))
        self.built = True

    def call(self, sequence_output, cls_positions=None):
        if cls_positions is None:
            return self.dense(sequence_output[:, 0, :])  # (B, H)
        positions = ops.expand_dims(ops.cast(cls_positions, "int32"), axis=-1)  # (B, P, 1)
        return self.dense(ops.take_along_axis(sequence_output, positions, axis=1))  # (B, P, H)

    def compute_output_shape(self, sequence_output_shape, cls_positions_shape=None):
        if cls_positions_shape is not None:
            return tuple(cls_positions_shape) + (self.hidden_size,)
        return (sequence_output_shape[0], self.hidden_size)

    def get_config(self):
        config = super().get_config()
        config.update(hidden_size=self.hidden_size, initializer_range=self.initializer_range)
        return config
