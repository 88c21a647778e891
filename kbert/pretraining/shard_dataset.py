"""Pretraining shards as a `keras.utils.PyDataset`, addressable by global batch number."""

import queue
import threading

import keras

from kbert.argument_checks import check_integer

# How long the reading thread waits on a full queue before it checks for a stop.
_POLL_SECONDS = 0.1


class ShardDataset(keras.utils.PyDataset):
    """Batches `start`, ..., `start + num_batches - 1` of an endless pass over shards.

    Batch `n` of the run is batch `n % batches_per_epoch` of epoch
    `n // batches_per_epoch`, and each epoch visits the data in the order
    `ShardReader.batches(shuffle=True, seed=(seed, epoch))` gives, the last
    incomplete batch left out (static shapes compile once). So the batches of a run
    depend only on the data and the seed: a resumed run (`start` > 0) sees exactly
    the batches the interrupted run would have seen.

    A background thread reads ahead (loading and shuffling the next shard while the
    device trains), `prefetch` batches at most, in order. Keras asks for the batches
    in order; a jump (out of order, or back to the start after TensorFlow peeks at
    the first batch) restarts the reading at the wanted batch.

    Multi-process data parallelism: with `share=(i, P)` each batch holds rows
    `[i * B / P, (i + 1) * B / P)` of the global batch `B = batch_size`, the share
    that process `i` of `P` feeds (see `kbert.training.distribution.process_share`).

    Args:
        reader: a `ShardReader` (or `PackedShardReader`: its rows hold several instances).
        batch_size: rows per global batch.
        num_batches: the length of this view; None for one epoch.
        start: the global number of its first batch.
        seed: the seed of the data order.
        shuffle: False to read the shards in stored order every epoch (evaluation).
        share: `(process index, process count)`.
        prefetch: batches read ahead of the one Keras asks for (at least 1).
    """

    def __init__(
        self,
        reader,
        batch_size,
        num_batches,
        start=0,
        seed=0,
        shuffle=True,
        share=(0, 1),
        prefetch=2,
    ):
        super().__init__(workers=1, use_multiprocessing=False)
        check_integer("batch_size", batch_size, 1)
        check_integer("start", start, 0)
        check_integer("prefetch", prefetch, 1)
        index, count = share
        check_integer("share count", count, 1)
        if not 0 <= index < count or batch_size % count:
            raise ValueError(
                "`share` must be (index, count) with 0 <= index < count and `batch_size` "
                f"a multiple of count. Received: share={share}, batch_size={batch_size}"
            )
        self.reader = reader
        self.batch_size = batch_size
        self.batches_per_epoch = reader.num_rows // batch_size
        if self.batches_per_epoch == 0:
            raise ValueError(
                f"{reader.folder} holds {reader.num_rows} rows, fewer than one batch: "
                f"lower `batch_size`. Received: batch_size={batch_size}"
            )
        if num_batches is None:
            num_batches = self.batches_per_epoch
        check_integer("num_batches", num_batches, 0)
        self.length = num_batches
        self.start = start
        self.seed = seed
        self.shuffle = shuffle
        rows = batch_size // count
        self._rows = slice(index * rows, (index + 1) * rows)
        self.prefetch = prefetch
        self._lock = threading.Lock()
        self._reading = None  # (queue, stop event) of the current reading thread
        self._next_index = None

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        if not 0 <= index < self.length:
            raise IndexError(f"batch {index} of a ShardDataset of {self.length}")
        with self._lock:
            if self._reading is None or index != self._next_index:
                self._start_reading(index)
            batch = self._reading[0].get()
            if isinstance(batch, BaseException):
                self._stop_reading()
                raise batch
            self._next_index = index + 1
            return batch

    def close(self):
        """Stops the reading thread (it also ends by itself after the last batch)."""
        with self._lock:
            self._stop_reading()

    def _start_reading(self, first):
        self._stop_reading()
        batches = queue.Queue(maxsize=self.prefetch)
        stop = threading.Event()
        thread = threading.Thread(
            target=self._read, args=(first, batches, stop), name="kbert-shards", daemon=True
        )
        self._reading = (batches, stop)
        thread.start()

    def _stop_reading(self):
        if self._reading is not None:
            self._reading[1].set()
            self._reading = None
            self._next_index = None

    def _read(self, first, batches, stop):
        """Puts batches `first`, ... of this view into `batches`, in order, until `stop`."""
        try:
            for batch in self._batches_from(first):
                if not _put(batches, stop, batch):
                    return
        except Exception as error:  # Handed to the training thread, raised there.
            _put(batches, stop, error)

    def _batches_from(self, first):
        epoch, position = divmod(self.start + first, self.batches_per_epoch)
        epoch_batches = self._epoch(epoch, position)
        for _ in range(first, self.length):
            if position == self.batches_per_epoch:
                epoch, position = epoch + 1, 0
                epoch_batches = self._epoch(epoch, position)
            batch = next(epoch_batches)
            position += 1
            yield {name: array[self._rows] for name, array in batch.items()}

    def _epoch(self, epoch, position):
        """The batches of `epoch` from `position` on."""
        batches = self.reader.batches(
            self.batch_size,
            shuffle=self.shuffle,
            seed=[self.seed, epoch] if self.shuffle else None,
            drop_remainder=True,
        )
        for _ in range(position):
            next(batches)
        return batches


def _put(batches, stop, item):
    """Puts `item` into the queue unless `stop` is set first; returns whether it did."""
    while not stop.is_set():
        try:
            batches.put(item, timeout=_POLL_SECONDS)
            return True
        except queue.Full:
            continue
    return False
