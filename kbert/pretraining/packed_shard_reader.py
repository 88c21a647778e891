"""Pretraining shards read as packed rows: several instances per row, packed when loaded."""

import numpy as np

from kbert.pretraining.sequence_packer import DEFAULT_SEQUENCES_PER_ROW, SequencePacker
from kbert.pretraining.shard_reader import ShardReader


class PackedShardReader(ShardReader):
    """A `ShardReader` whose rows hold up to `max_sequences_per_row` instances each.

    Any shards of `kbert create-pretraining-data` work: when the reader opens, it reads
    the `lengths` of every shard (not the tokens) and `SequencePacker.plan` groups the
    instances of each shard, seeded by `(seed, shard number)`. The plan is fixed for the
    reader's life, so a pass over the data always has `num_rows` rows and
    `ShardDataset` can address batch `n` of a run from the seed alone (exact resume);
    `batches` then shuffles the packed rows, as `ShardReader` shuffles instances. Each
    shard is packed when it is loaded (`SequencePacker.pack`), with one shard in memory.
    Masked data's rows get as many prediction slots as the fullest row of all the
    shards has real predictions (`max_predictions_per_seq`), found when the reader
    opens from the stored `mask_weights`.

    Args:
        folder: the folder of the shards.
        max_sequences_per_row: `P`, the most instances in one row (MLPerf: 3).
        seed: the seed of the grouping (`PretrainingConfig.seed`).

    Examples:

    >>> reader = PackedShardReader("data/", seed=12345)
    >>> reader.unpacked_fill_factor, reader.fill_factor
    (0.41, 0.97)
    >>> batch = next(reader.batches(32, shuffle=True, seed=[12345, 0]))
    >>> batch["nsp_labels"].shape
    (32, 3)
    """

    def __init__(self, folder, max_sequences_per_row=DEFAULT_SEQUENCES_PER_ROW, seed=0):
        super().__init__(folder)
        self.packer = SequencePacker(self.sequence_length, max_sequences_per_row)
        self.seed = seed
        self._plans = []
        self.num_tokens = 0
        self._predictions = 1 if self.masked else None
        names = ("lengths", "mask_weights") if self.masked else ("lengths",)
        for number, shard in enumerate(self.manifest["shards"]):
            arrays = self._load(shard, names=names)
            plan = self.packer.plan(arrays["lengths"], seed=[seed, number])
            self._plans.append(plan)
            self.num_tokens += int(np.sum(arrays["lengths"], dtype=np.int64))
            if self.masked:
                counts = self.packer.prediction_counts(arrays["mask_weights"], plan)
                self._predictions = max(self._predictions, int(counts.max()))

    @property
    def max_sequences_per_row(self):
        return self.packer.max_sequences_per_row

    @property
    def num_rows(self):
        return sum(len(plan) for plan in self._plans)

    @property
    def max_predictions_per_seq(self):
        """The prediction slots of a packed row (the most any row needs), or None."""
        return self._predictions

    @property
    def unpacked_fill_factor(self):
        """The share of real tokens when every instance has a row of its own."""
        return self.packer.fill_factor([self.num_tokens], self.num_instances)

    @property
    def fill_factor(self):
        """The share of real tokens in the packed rows."""
        return self.packer.fill_factor([self.num_tokens], self.num_rows)

    def batches(self, batch_size, shuffle=False, seed=None, drop_remainder=False):
        """Yields batches of packed rows, as `ShardReader.batches` yields instances.

        Yields:
            Dicts of numpy arrays, as `SequencePacker.pack` returns them.
        """
        return super().batches(batch_size, shuffle, seed, drop_remainder)

    def _rows(self, number):
        shard = self.manifest["shards"][number]
        return self.packer.pack(self._load(shard), self._plans[number], self._predictions)

    def __repr__(self):
        return (
            f"PackedShardReader({str(self.folder)!r}, {self.num_instances} instances in "
            f"{self.num_rows} rows of up to {self.max_sequences_per_row}, fill factor "
            f"{self.unpacked_fill_factor:.3f} -> {self.fill_factor:.3f})"
        )
