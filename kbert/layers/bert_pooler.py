import keras

from kbert.layers.host_truncated_normal import HostTruncatedNormal


@keras.saving.register_keras_serializable(package="kbert")
class BertPooler(keras.layers.Layer):
    """Dense + tanh on the first ([CLS]) token: BERT's sentence representation.

    Args:
        hidden_size: model width H.
        initializer_range: standard deviation of the truncated-normal initialiser.

    Call arguments:
        sequence_output: float tensor (B, L, H).

    Returns:
        Float tensor (B, H).
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

    def build(self, sequence_output_shape):
        self.dense.build((sequence_output_shape[0], sequence_output_shape[-1]))
        self.built = True

    def call(self, sequence_output):
        return self.dense(sequence_output[:, 0, :])  # (B, H)

    def compute_output_shape(self, sequence_output_shape):
        return (sequence_output_shape[0], self.hidden_size)

    def get_config(self):
        config = super().get_config()
        config.update(hidden_size=self.hidden_size, initializer_range=self.initializer_range)
        return config
