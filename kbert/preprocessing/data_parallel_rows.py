"""Batches that the devices of data parallelism can split: fillers that weigh nothing.

JAX's data parallelism splits every batch evenly over its devices, so a batch of 5 rows
cannot go to 2 devices. `BucketedDataset` fills such a batch up with copies of its first
row and gives them weight 0 (`filled_weights`); the real rows' weights make the loss the
one of the real rows alone, so the gradients are those of one device.
"""

import keras
import numpy as np

from kbert.preprocessing.length_buckets import row_bucket

# Label value the task losses ignore (sub-word continuations, padding).
IGNORED_LABEL = -100


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


def filled_size(rows, replicas, at_least=0):
    """The rows of a batch of `rows` filled up to `at_least` (a full batch, or 0), then to a
    multiple of `replicas` devices."""
    size = max(rows, at_least)
    return size + (-size % replicas)


def real_share(rows, replicas, at_least=0):
    """The share of real rows in a batch of `rows` rows filled up as `filled_size` does."""
    return rows / filled_size(rows, replicas, at_least)


def inference_rows(count):
    """The rows a forward pass on `count` rows is padded to: `row_bucket(count)`, rounded
    up to a multiple of `data_parallel_replicas()`, so that the devices split it evenly
    (under `tf.distribute`, an uneven batch leaves a replica short and its collectives
    out of step with the others')."""
    replicas = data_parallel_replicas()
    return -(-row_bucket(count) // replicas) * replicas


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
    the whole batch, so its real rows weigh `filled / len(rows)`. A per-token label (a
    list leaf) weighs, on each labelled token, `filled * length / labelled`, where
    `labelled` counts the batch's tokens whose label is not `IGNORED_LABEL`: a loss
    that sums over the batch's `filled * length` slots (`TokenCrossEntropy` given
    weights) then takes the mean over the labelled tokens of the whole global batch,
    even where each replica of a `tf.distribute` strategy sums its own share.

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
            continue
        labelled = np.zeros((filled, length), np.float32)
        for row, example in enumerate(rows):
            labelled[row, : len(leaf[example])] = np.asarray(leaf[example]) != IGNORED_LABEL
        scale = np.float32(filled * length / max(labelled.sum(), 1.0))
        row_weights = np.concatenate([real, np.zeros(fillers, np.float32)])[:, None]
        weights[key] = labelled * row_weights * scale
    return weights if isinstance(labels, dict) else weights[None]
