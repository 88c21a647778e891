"""The rest of one epoch of a `BucketedDataset` as a dataset Keras cannot move on."""

import keras
import numpy as np

from kbert.preprocessing.batch_structure import map_leaves
from kbert.preprocessing.data_parallel_rows import data_parallel_replicas
from kbert.preprocessing.data_parallel_rows import process_share


class EpochView(keras.utils.PyDataset):
    """The batches of one epoch of a `BucketedDataset` from `start_batch` on.

    Made by `BucketedDataset.epoch_view`, which checks the arguments. The view ignores
    `on_epoch_end`, so `model.fit(view, epochs=1)` trains on exactly these batches, in
    this order, whatever Keras calls.

    Args:
        dataset: the `BucketedDataset`.
        epoch: the epoch whose batch order the view follows.
        start_batch: the first batch of the view.
    """

    def __init__(self, dataset, epoch, start_batch):
        super().__init__()
        self.dataset = dataset
        self.epoch = epoch
        self.start_batch = start_batch
        self.replicas = data_parallel_replicas()  # here: tf.data reads on other threads

    def __len__(self):
        return self.dataset.num_batches_per_epoch - self.start_batch

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(f"Batch index {index} out of range [0, {len(self)}).")
        batch = self.dataset.batch(self.epoch, self.start_batch + index, self.replicas)
        # Several processes (`--distributed`): each feeds its share of the global batch
        # (the devices divide the filled batch, so every share is whole).
        process, processes = process_share()
        if processes == 1:
            return batch
        return map_leaves(lambda leaf: np.split(leaf, processes)[process], batch)

    def example_indices(self, index):
        return self.dataset.example_indices(self.start_batch + index, self.epoch)

    def as_tf_dataset(self):
        """This view as a `tf.data.Dataset` whose sequence axis is variable.

        Keras infers a PyDataset's input signature on TensorFlow from its first two
        batches. An epoch starts with two batches of different lengths when it can
        (see `BucketedDataset`), but a view that starts mid-epoch may not, and would
        then fix the sequence length for the rest; this dataset declares it variable.
        """
        import tensorflow as tf

        def signature(array):
            # Every axis but the batch's varies: lengths, and the number of choices.
            shape = [None] * np.ndim(array)
            return tf.TensorSpec(shape=shape, dtype=tf.as_dtype(np.asarray(array).dtype))

        count = len(self)
        dataset = tf.data.Dataset.from_generator(
            lambda: (self[index] for index in range(count)),
            output_signature=map_leaves(signature, self[0]),
        )
        return dataset.apply(tf.data.experimental.assert_cardinality(count)).prefetch(2)
