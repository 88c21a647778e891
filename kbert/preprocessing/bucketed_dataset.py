"""Training batches padded to a few length buckets, in a reproducible, resumable order."""

import functools

import keras
import numpy as np

from kbert.argument_checks import check_positive_int
from kbert.preprocessing.batch_padding import extra_input_batch
from kbert.preprocessing.batch_padding import label_batch
from kbert.preprocessing.batch_padding import padded_inputs
from kbert.preprocessing.batch_structure import map_leaves
# Importable from here too: the per-token preprocessors pad their labels with it.
from kbert.preprocessing.data_parallel_rows import IGNORED_LABEL as IGNORED_LABEL
from kbert.preprocessing.data_parallel_rows import data_parallel_replicas
from kbert.preprocessing.data_parallel_rows import filled_size
from kbert.preprocessing.data_parallel_rows import filled_weights
from kbert.preprocessing.example_rows import check_row_lengths
from kbert.preprocessing.example_rows import choice_count
from kbert.preprocessing.example_rows import example_rows
from kbert.preprocessing.example_rows import longest_row
from kbert.preprocessing.example_rows import zero_rows
from kbert.preprocessing.epoch_view import EpochView
from kbert.preprocessing.example_columns import prepared_extra_inputs
from kbert.preprocessing.example_columns import prepared_labels
from kbert.preprocessing.example_columns import prepared_weights
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.preprocessing.length_buckets import bucket_by_bucket_batches
from kbert.preprocessing.length_buckets import bucket_length
from kbert.preprocessing.length_buckets import length_buckets
from kbert.preprocessing.length_buckets import length_sorted_batches
from kbert.preprocessing.length_buckets import pad_rows
from kbert.preprocessing.length_buckets import row_bucket


class BucketedDataset(keras.utils.PyDataset):
    """(inputs, labels) batches for `model.fit`, each padded to a length bucket.

    Examples are grouped by the smallest bucket that holds them and batched within
    their bucket; the few examples left over by a bucket join the next one. So a
    compiled training step (XLA on JAX and TensorFlow) is traced for a handful of
    shapes: one per bucket, plus one for the epoch's single smaller batch, unless
    `full_batches` fills that batch up (see `batch`). Each epoch
    shuffles the examples inside every bucket and then the order of the batches,
    with a generator seeded by `(seed, epoch)`: the order is a pure function of the
    seed and the epoch, whatever ran before.

    `model.fit` calls `on_epoch_end`, which moves on to the next epoch (Keras calls it
    once more when `fit` starts, so the first epoch trained is `epoch + 1`; the order
    stays reproducible). For exact control, as when training resumes after an
    interruption, `epoch_view(epoch, start_batch)` is the rest of one epoch as a
    dataset of its own, which Keras cannot move on.

    Pass `shuffle=False` to `model.fit`: the order is already shuffled, and Keras's
    own batch shuffling would draw from Python's global random state.

    Args:
        token_ids: sequence of 1-D int arrays, one per example (segment-packed by
            the tokenizer: `[CLS] ... [SEP]`). For multiple choice, each example is a
            tuple of such arrays, one per choice (every example with as many), and
            the inputs come as (B, C, L), each choice padded on its own.
        segment_ids: sequence like `token_ids`, of the same lengths; None for zeros.
        labels: None (inputs only, e.g. for `predict`), or a structure whose leaves
            are per-example labels: an array with one entry per example (a class id,
            a start position), or a sequence of 1-D arrays as long as the examples'
            `token_ids` (per-token labels, padded with -100). A dict of leaves gives
            a dict of label batches (e.g. `{"start_logits": ..., "end_logits": ...}`).
        batch_size: examples per batch.
        buckets: sorted sequence lengths to pad to; None for
            `kbert.preprocessing.length_buckets.length_buckets(longest example)`.
        shuffle: whether to shuffle each epoch. When False, batches come bucket by
            bucket, examples in their original order within a bucket.
        length_sorted: inference's batching instead (`length_sorted_batches`: longest
            first, each batch padded to its own bucket), never shuffled.
        seed: seed of the shuffling.
        pad_token_id: the `[PAD]` id.
        sample_weights: None, or a structure like `labels` (a leaf, or a dict of leaves
            keyed like the labels) of one float weight per example; batches are then
            `(inputs, labels, sample_weights)`.
        extra_inputs: None, or a dict `name -> sequence of 1-D int arrays`, one per
            example, added to the inputs padded with 0 to the longest in the batch
            (positions into the sequence, such as `mask_positions`).
        full_batches: whether every labelled batch has `batch_size` rows: the
            epoch's smaller batch is filled up with rows that weigh nothing (`batch`),
            so the training step compiles one program fewer. A compilation costs more
            than a few rows of a step: on a CPU, MiniLM's training step compiles in
            about 5 s and runs 32 rows of 32 tokens in about 0.6 s.
        **kwargs: `keras.utils.PyDataset` arguments (`workers`, ...).

    Example:

    >>> dataset = BucketedDataset(token_ids, labels=np.array(label_ids), batch_size=32)
    >>> model.fit(dataset, epochs=3, shuffle=False)
    """

    def __init__(
        self,
        token_ids,
        segment_ids=None,
        labels=None,
        batch_size=DEFAULT_BATCH_SIZE,
        buckets=None,
        shuffle=True,
        seed=0,
        pad_token_id=0,
        sample_weights=None,
        extra_inputs=None,
        length_sorted=False,
        full_batches=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        batch_size = check_positive_int("batch_size", batch_size)
        self._token_ids = [example_rows(ids) for ids in token_ids]
        if not self._token_ids:
            raise ValueError("A BucketedDataset needs at least one example. Received: 0")
        self.choices = choice_count(self._token_ids)
        self.lengths = np.array([longest_row(ids) for ids in self._token_ids], dtype=np.int64)
        if segment_ids is None:
            self._segment_ids = [zero_rows(ids) for ids in self._token_ids]
        else:
            self._segment_ids = [example_rows(ids) for ids in segment_ids]
            check_row_lengths(self._segment_ids, self._token_ids)
        count = len(self.lengths)
        self._labels = (
            None
            if labels is None
            else map_leaves(lambda leaf: prepared_labels(leaf, self.lengths), labels)
        )
        if sample_weights is not None and labels is None:
            raise ValueError("`sample_weights` need `labels`. Received: labels=None")
        self._sample_weights = (
            None
            if sample_weights is None
            else map_leaves(lambda leaf: prepared_weights(leaf, count), sample_weights)
        )
        self._extra_inputs = prepared_extra_inputs(extra_inputs, count)
        self.buckets = tuple(
            length_buckets(int(self.lengths.max())) if buckets is None else sorted(buckets)
        )
        if self.lengths.max() > self.buckets[-1]:
            raise ValueError(
                f"An example has {int(self.lengths.max())} tokens, more than the largest "
                f"bucket. Received: buckets={self.buckets}"
            )
        self.batch_size = int(batch_size)
        self.length_sorted = bool(length_sorted)
        self.full_batches = bool(full_batches)
        self.shuffle = shuffle and not self.length_sorted
        self.seed = int(seed)
        self.pad_token_id = pad_token_id
        self._bucket_of = np.searchsorted(self.buckets, self.lengths)
        self.num_batches_per_epoch = -(-len(self.lengths) // self.batch_size)
        self.epoch = 0
        self._plan = None

    # --- Batches -------------------------------------------------------------------------

    def on_epoch_end(self):
        self.epoch += 1

    def __len__(self):
        return self.num_batches_per_epoch

    def __getitem__(self, index):
        return self.batch(self.epoch, index)

    def example_indices(self, index, epoch=None):
        """The example indices of batch `index` of `epoch` (default: the current one)."""
        if not 0 <= index < self.num_batches_per_epoch:
            raise IndexError(f"Batch index {index} out of range [0, {self.num_batches_per_epoch}).")
        return self._epoch_plan(self.epoch if epoch is None else epoch)[index]

    def batch(self, epoch, index, replicas=None):
        """Batch `index` of epoch `epoch`: `(inputs,)`, or `(inputs, labels)` with labels.

        Under data parallelism (`data_parallel_replicas()` devices), a batch the devices
        do not divide is filled up with copies of its first row that weigh nothing, and
        its real rows weigh `filled / real` where a loss averages over the batch: the
        loss and the gradients are those of the real rows alone. With `full_batches`,
        a batch smaller than `batch_size` is filled up the same way. (Every batch then
        carries sample weights, so that all have one structure.) `replicas`: the devices
        (default: the current distribution's)."""
        rows = self.example_indices(index, epoch)
        replicas = data_parallel_replicas() if replicas is None else replicas
        fill = self.full_batches and self._labels is not None
        size = filled_size(len(rows), replicas, self.batch_size if fill else 0)
        filled = np.concatenate([rows, np.repeat(rows[:1], size - len(rows))])
        length = bucket_length(int(self.lengths[rows].max()), self.buckets)
        inputs = self._inputs(filled, length)
        if self._labels is None:
            return (inputs,)
        labels = map_leaves(
            lambda leaf: label_batch(leaf, filled, length, len(rows), self.lengths), self._labels
        )
        if replicas > 1 or fill:
            # Every batch with weights: Keras distributes (and compiles for) the
            # batches of one structure.
            weights = filled_weights(self._labels, self._sample_weights, rows, len(filled), length)
            return inputs, labels, weights
        if self._sample_weights is None:
            return inputs, labels
        return inputs, labels, map_leaves(lambda leaf: leaf[rows], self._sample_weights)

    def _inputs(self, rows, length):
        inputs = padded_inputs(
            self._token_ids, self._segment_ids, rows, length, self.choices, self.pad_token_id
        )
        for name, values in self._extra_inputs.items():
            inputs[name] = extra_input_batch(values, rows)
        return inputs

    def _epoch_plan(self, epoch):
        """The batches of `epoch`, as arrays of example indices (cached per epoch)."""
        if self._plan is not None and self._plan[0] == epoch:
            return self._plan[1]
        rng = np.random.default_rng([self.seed, epoch])
        if self.length_sorted:
            batches = length_sorted_batches(self.lengths, self.batch_size)
        else:
            batches = bucket_by_bucket_batches(
                self._bucket_of, len(self.buckets), self.batch_size, rng if self.shuffle else None
            )
        if self.shuffle:
            batches = [batches[i] for i in rng.permutation(len(batches))]
        # Keras's TensorFlow adapter infers a PyDataset's input signature from its first
        # two batches; if both had the same length, a later bucket would not fit it. So
        # batch 1 gets a different length whenever the epoch has one.
        bucket_of_batch = [self._bucket_of[batch].max() for batch in batches]
        if len(batches) > 2 and bucket_of_batch[1] == bucket_of_batch[0]:
            other = next(
                (i for i, b in enumerate(bucket_of_batch) if b != bucket_of_batch[0]), None
            )
            if other is not None:
                batches[1], batches[other] = batches[other], batches[1]
        self._plan = (epoch, batches)
        return batches

    # --- Views and other consumers -------------------------------------------------------

    def epoch_view(self, epoch, start_batch=0):
        """Batches `start_batch`, `start_batch + 1`, ... of epoch `epoch`, as a PyDataset.

        The view ignores `on_epoch_end`, so `model.fit(view, epochs=1)` trains on
        exactly these batches, in this order, whatever Keras calls.
        """
        if isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer)) or epoch < 0:
            raise ValueError(f"`epoch` must be an integer >= 0. Received: epoch={epoch!r}")
        if not 0 <= start_batch <= self.num_batches_per_epoch:
            raise ValueError(
                f"`start_batch` must be in [0, {self.num_batches_per_epoch}]. "
                f"Received: start_batch={start_batch!r}"
            )
        return EpochView(self, int(epoch), int(start_batch))

    def predict(self, model, sequence_outputs=False, forward=None):
        """Runs `model.predict_on_batch` over one epoch, one batch at a time.

        Args:
            model: a Keras model taking this dataset's inputs.
            sequence_outputs: whether the outputs of rank 2 or more are per token,
                `(B, L, ...)`; they are then cut to each example's length.
            forward: `inputs -> outputs` to run instead of `model.predict_on_batch`.

        Returns:
            A list with one entry per example, in example order, each with the
            structure of the model's outputs.
        """
        outputs = [None] * len(self.lengths)
        for index in range(self.num_batches_per_epoch):
            rows, batch = self.example_indices(index), self[index][0]
            # Rows (fillers included) to a few counts the devices divide: few programs.
            filled = len(batch["token_ids"])
            bucket = row_bucket(filled)
            inputs = pad_rows(batch, bucket if bucket % data_parallel_replicas() == 0 else filled)
            batch_outputs = (forward or model.predict_on_batch)(inputs)
            for row, example in enumerate(rows):
                end = self.lengths[example] if sequence_outputs else None
                outputs[example] = map_leaves(
                    functools.partial(_example_row, row=row, end=end), batch_outputs
                )
        return outputs


def _example_row(leaf, row, end):
    """Row `row` of an output batch, cut at `end` along the sequence (None: not cut)."""
    leaf = np.asarray(leaf)
    if end is not None and leaf.ndim >= 2:
        return leaf[row, :end]
    return leaf[row]
