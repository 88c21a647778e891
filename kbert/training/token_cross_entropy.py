"""Per-token cross-entropy whose weights can carry the global batch's normalisation."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kbert")
class TokenCrossEntropy(keras.losses.Loss):
    """Sparse cross-entropy on logits over the tokens whose label is not `ignore_class`.

    Without `sample_weight` it is `keras.losses.SparseCategoricalCrossentropy(
    from_logits=True, ignore_class=ignore_class)`: the mean over the batch's labelled
    tokens. With a weight per token, it is the sum of the labelled tokens' weighted
    losses over the batch's (B * L) slots, Keras' "sum_over_batch_size": the weights
    carry the normalisation. That is what data parallelism needs: under a
    `tf.distribute` strategy each replica reduces its own share of the batch, and a
    mean over each replica's labelled tokens (Keras' loss) is not the mean over the
    batch's, since sentences differ in length. `BucketedDataset` gives every labelled
    token the weight (B * L) / (labelled tokens of the global batch) there
    (`filled_weights`), so the replicas' sums add up to the one-device mean on every
    backend.

    Args:
        ignore_class: the label of tokens that count for nothing (BERT's -100 on
            padding and sub-word continuations).
        name: the loss's name.
        dtype: the dtype of the loss's computations.

    Examples:

    >>> loss = TokenCrossEntropy()
    >>> float(loss([[1, -100]], [[[0.0, 0.0], [5.0, 0.0]]]))  # log(2), the second ignored
    0.6931...
    """

    def __init__(self, ignore_class=-100, name="token_cross_entropy", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.ignore_class = ignore_class

    def __call__(self, y_true, y_pred, sample_weight=None):
        with keras.name_scope(self.name):
            y_pred = ops.convert_to_tensor(y_pred, dtype=self.dtype)
            y_true = ops.reshape(ops.convert_to_tensor(y_true, "int32"), ops.shape(y_pred)[:-1])
            counts = ops.not_equal(y_true, self.ignore_class)
            labelled = ops.cast(counts, self.dtype)
            losses = keras.losses.sparse_categorical_crossentropy(
                ops.where(counts, y_true, 0), y_pred, from_logits=True
            )
            if sample_weight is None:
                loss = ops.divide_no_nan(ops.sum(losses * labelled), ops.sum(labelled))
            else:
                weights = ops.reshape(ops.cast(sample_weight, self.dtype), ops.shape(labelled))
                slots = ops.cast(ops.size(labelled), self.dtype)
                loss = ops.sum(losses * labelled * weights) / slots
            return _replica_share(loss)

    def get_config(self):
        return {"name": self.name, "ignore_class": self.ignore_class, "dtype": self.dtype}


def _replica_share(loss):
    """`loss` divided by the replicas of the current `tf.distribute` strategy, as Keras'
    own mean losses are (the strategy sums the replicas' gradients)."""
    if keras.backend.backend() != "tensorflow":
        return loss
    import tensorflow as tf

    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    return loss / replicas if replicas > 1 else loss
