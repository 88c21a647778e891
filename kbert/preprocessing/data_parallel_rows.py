"""Batches that the devices of data parallelism can split: fillers that weigh nothing.

JAX's data parallelism splits every batch evenly over its devices, so a batch of 5 rows
cannot go to 2 devices. `BucketedDataset` fills such a batch up with copies of its first
row and gives them weight 0 (`filled_weights`); the real rows' weights make the loss the
one of the real rows alone, so the gradients are those of one device.
"""

import keras
import numpy as np


def data_parallel_replicas():
    """Devices each batch is split over: those of the batch axis of the current
    `keras.distribution` (JAX's data parallelism), the replicas of the current
    `tf.distribute` strategy on TensorFlow, 1 without either."""
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        return tf.distribute.get_strategy().num_replicas_in_sync if tf.distribute.has_strategy() else 1
    if keras.backend.backend() != "jax":
        return 1
    distribution = keras.distribution.distribution()
    if distribution is None:
        return 1
    mesh = distribution.device_mesh
    return int(mesh.shape[list(mesh.axis_names).index(distribution.batch_dim_name)])


def process_share():
    """`(index, count)`: this process's share of every global batch under the current
    distribution, `(0, 1)` for a single process. Process `i` of `P` feeds rows
    `[i * B / P, (i + 1) * B / P)` of each global batch `B`, as Keras shards a
    `tf.data` pipeline."""
    if keras.backend.backend() != "jax" or keras.distribution.distribution() is None:
        return 0, 1
    import jax

    return jax.process_index(), jax.process_count()


def filled_weights(labels, sample_weights, rows, filled, length):
    """Sample weights of a batch of `rows` filled up to `filled` rows of `length` tokens.

    Fillers weigh 0. A per-example label (an array leaf of `labels`) is averaged over
    the whole batch, so its real rows weigh `filled / len(rows)`; per-token labels (a
    list leaf) are averaged over the tokens that count (the fillers' labels are ignored
    ones), so theirs weigh 1, one weight per token (Keras multiplies them with the
    ignored-label mask).

    Args:
        labels: a `BucketedDataset`'s labels: a leaf or a dict of leaves.
        sample_weights: its per-example weights, structured like `labels`, or None.
        rows: the batch's example indices.
        filled: rows in the filled batch.
        length: the batch's padded length.

    Returns:
        Weights structured like `labels`.
    """
    leaves = labels if isinstance(labels, dict) else {None: labels}
    fillers = filled - len(rows)
    weights = {}
    for key, leaf in leaves.items():
        if sample_weights is None:
            real = np.ones(len(rows), np.float32)
        else:
            real = (sample_weights[key] if isinstance(sample_weights, dict) else sample_weights)[rows]
        if isinstance(leaf, np.ndarray):
            real = real * np.float32(filled / len(rows))
            weights[key] = np.concatenate([real, np.zeros(fillers, np.float32)])
        else:
            per_token = np.repeat(real[:, None], length, axis=1)
            weights[key] = np.concatenate([per_token, np.zeros((fillers, length), np.float32)])
    return weights if isinstance(labels, dict) else weights[None]
