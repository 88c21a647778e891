"""Pretraining shards as a `keras.utils.PyDataset`, addressable by global batch number."""

import keras

from kbert.pretraining.argument_checks import check_integer


class ShardDataset(keras.utils.PyDataset):
    """Batches `start`, ..., `start + num_batches - 1` of an endless pass over shards.

    Batch `n` of the run is batch `n % batches_per_epoch` of epoch
    `n // batches_per_epoch`, and each epoch visits the data in the order
    `ShardReader.batches(shuffle=True, seed=(seed, epoch))` gives, the last
    incomplete batch left out (static shapes compile once). So the batches of a run
    depend only on the data and the seed: a resumed run (`start` > 0) sees exactly
    the batches the interrupted run would have seen.

    Batches are read in order; a jump (only when Keras asks out of order) replays the
    epoch up to the wanted batch.

    Args:
        reader: a `ShardReader`.
        batch_size: instances per batch.
        num_batches: the length of this view; None for one epoch.
        start: the global number of its first batch.
        seed: the seed of the data order.
        shuffle: False to read the shards in stored order every epoch (evaluation).
    """

    def __init__(self, reader, batch_size, num_batches, start=0, seed=0, shuffle=True):
        super().__init__(workers=1, use_multiprocessing=False)
        check_integer("batch_size", batch_size, 1)
        check_integer("start", start, 0)
        self.reader = reader
        self.batch_size = batch_size
        self.batches_per_epoch = reader.num_instances // batch_size
        if self.batches_per_epoch == 0:
            raise ValueError(
                f"{reader.folder} holds {reader.num_instances} instances, fewer than one "
                f"batch. Received: batch_size={batch_size}"
            )
        if num_batches is None:
            num_batches = self.batches_per_epoch
        check_integer("num_batches", num_batches, 0)
        self.length = num_batches
        self.start = start
        self.seed = seed
        self.shuffle = shuffle
        self._epoch = None
        self._next_index = None
        self._iterator = None

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        if not 0 <= index < self.length:
            raise IndexError(f"batch {index} of a ShardDataset of {self.length}")
        epoch, position = divmod(self.start + index, self.batches_per_epoch)
        if epoch != self._epoch or position != self._next_index:
            self._iterator = self.reader.batches(
                self.batch_size,
                shuffle=self.shuffle,
                seed=[self.seed, epoch] if self.shuffle else None,
                drop_remainder=True,
            )
            for _ in range(position):
                next(self._iterator)
            self._epoch = epoch
        self._next_index = position + 1
        return next(self._iterator)
