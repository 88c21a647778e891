"""Batch shapes: a few padded lengths, so XLA compiles a handful of programs; rows per batch.

A compiled forward pass (JAX's `jit`, TensorFlow's XLA) is specialised to the shapes
of its inputs. Padded to its own longest row, every batch of a new length would cost
a fresh compilation, which is seconds on a CPU, far longer than the forward pass.
Rounding lengths up to a few buckets bounds the number of programs:
`len(buckets)` sequence lengths times a few power-of-two batch sizes.
"""

import numpy as np

# BERT's usual sequence lengths. 384 is the SQuAD window length of the BERT paper.
DEFAULT_LENGTH_BUCKETS = (16, 32, 64, 128, 256, 384, 512)
# Inference pads far less: every multiple of 8 up to 128 tokens, of 16 up to 256 and
# of 32 up to 512, so padding adds at most 7 tokens to a row under 64 tokens and at
# most 12.5% of a longer row (`inference_padding_bound`). On a CPU the forward pass
# costs in proportion to the tokens it computes: 64 sentences of at most 41 tokens ran
# at 64 (1.56x the tokens) with the training buckets, and run at 48 with these
# (benchmarks/NOTES.md). The extra programs compile once per machine on JAX (its
# persistent compilation cache, set by `kbert.cli.choose_backend_defaults`). Training
# keeps the coarser buckets: fewer programs, and its batches are shuffled anyway.
INFERENCE_LENGTH_BUCKETS = (
    *range(8, 129, 8),
    *range(144, 257, 16),
    *range(288, 513, 32),
)
# The padding an inference bucket may add to a row (`inference_padding_bound`).
INFERENCE_PADDING_FRACTION = 0.125
INFERENCE_PADDING_FLOOR = 7
# Rows per batch are padded to a power of two up to this count, then to a multiple of
# it (17 rows run as 24, not 32): at most this many rows of waste on a big batch.
ROW_BUCKET_STEP = 8

# Rows per batch wherever a caller gives none: every inference function, task model
# method and command, `fit`/`evaluate`/`predict` on raw strings, and the fine-tuning and
# pretraining configs. Keras' own default, and a batch of BERT's fine-tuning recipe.
DEFAULT_BATCH_SIZE = 32
# Inference's texts per forward pass on a CPU when the caller gives none
# (`kbert.inference.model_io.inference_batch_size`).
CPU_BATCH_SIZE = 8

# Inputs padded along the sequence axis by `pad_to_bucket`, and their padding values.
SEQUENCE_INPUTS = {"token_ids": 0, "segment_ids": 0, "padding_mask": 0}


def length_buckets(max_length, buckets=DEFAULT_LENGTH_BUCKETS):
    """The buckets a model with `max_length` positions can take.

    Args:
        max_length: the longest sequence the model accepts (its `max_positions`).
        buckets: candidate lengths, in any order.

    Returns:
        A sorted tuple of the buckets below `max_length`, ending with `max_length`
        itself, so that every length up to the model's limit has a bucket.

    Examples:

    >>> length_buckets(100)
    (16, 32, 64, 100)
    >>> length_buckets(512)
    (16, 32, 64, 128, 256, 384, 512)
    """
    if isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer)):
        raise ValueError(
            f"`max_length` must be a positive integer. Received: max_length={max_length!r}"
        )
    if max_length < 1:
        raise ValueError(
            f"`max_length` must be a positive integer. Received: max_length={max_length}"
        )
    kept = sorted({int(bucket) for bucket in buckets if 0 < bucket < max_length})
    return tuple(kept) + (int(max_length),)


def bucket_length(length, buckets):
    """The smallest of `buckets` that holds `length`.

    Args:
        length: a sequence length.
        buckets: a sorted tuple of lengths, as `length_buckets` returns.

    Returns:
        An int.

    Examples:

    >>> bucket_length(17, (16, 32, 64))
    32
    """
    index = int(np.searchsorted(buckets, length))
    if index == len(buckets):
        raise ValueError(
            f"A sequence of {length} tokens is longer than the largest bucket "
            f"({buckets[-1]}). Truncate it first. Received: buckets={tuple(buckets)}"
        )
    return int(buckets[index])


def power_of_two_bucket(count):
    """The smallest power of two >= `count` (at least 1): a bucket for batch sizes.

    Examples:

    >>> power_of_two_bucket(5)
    8
    """
    return 1 << max(int(count) - 1, 0).bit_length()


def inference_padding_bound(length):
    """The most padding tokens `INFERENCE_LENGTH_BUCKETS` add to a row of `length` tokens.

    Examples:

    >>> inference_padding_bound(20), inference_padding_bound(200)
    (7, 25)
    """
    return max(INFERENCE_PADDING_FLOOR, int(length * INFERENCE_PADDING_FRACTION))


def row_bucket(count):
    """The number of rows a batch of `count` rows is padded to.

    A power of two up to `ROW_BUCKET_STEP` rows, then the next multiple of it, so a
    compiled program serves many batch sizes while a batch of 17 texts computes 24
    rows rather than 32.

    Examples:

    >>> [row_bucket(count) for count in (1, 3, 8, 9, 17, 32, 33)]
    [1, 4, 8, 16, 24, 32, 40]
    """
    count = max(int(count), 1)
    if count <= ROW_BUCKET_STEP:
        return power_of_two_bucket(count)
    return -(-count // ROW_BUCKET_STEP) * ROW_BUCKET_STEP


def length_sorted_batches(lengths, batch_size):
    """Row indices in batches of `batch_size`, longest rows first: inference's batching.

    Every inference entry that takes several texts batches them with this: rows of
    similar length share a batch, so each batch pads to a tight bucket of its own;
    the caller writes each row's result back at its index, in the caller's order.

    Examples:

    >>> [batch.tolist() for batch in length_sorted_batches([3, 9, 5, 9], 2)]
    [[1, 3], [2, 0]]
    """
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def bucket_by_bucket_batches(bucket_of, num_buckets, batch_size, rng=None):
    """Training's batching: row indices in batches, bucket by bucket.

    Args:
        bucket_of: the bucket index of each row.
        num_buckets: how many buckets there are.
        batch_size: rows per batch.
        rng: a NumPy generator to shuffle the rows within each bucket, or None to
            keep their order.

    Returns:
        A list of index arrays. A bucket's last, incomplete batch moves on to the
        next bucket (padded longer), so only the last batch is smaller than
        `batch_size`: every other batch has one of a few shapes, each traced once.
    """
    batches = []
    carried = np.zeros(0, dtype=np.int64)
    for bucket in range(num_buckets):
        members = np.flatnonzero(np.asarray(bucket_of) == bucket)
        if rng is not None:
            members = rng.permutation(members)
        members = np.concatenate([carried, members])
        full = len(members) - len(members) % batch_size
        batches.extend(members[start : start + batch_size] for start in range(0, full, batch_size))
        carried = members[full:]
    if len(carried):
        batches.append(carried)
    return batches


def pad_to_bucket(batch, buckets, pad_values=None):
    """Pads the sequence axis of a batch to the smallest bucket that holds it.

    Args:
        batch: dict of arrays of shape `(B, L, ...)`, with at least `token_ids`.
            `token_ids`, `segment_ids` and `padding_mask` are padded (with 0, i.e.
            `[PAD]` in BERT vocabularies, segment 0 and "padding"); any other key is
            padded only if `pad_values` names it, and passed through otherwise
            (`mask_positions`, say, whose second axis is not the sequence).
        buckets: a sorted tuple of lengths, as `length_buckets` returns.
        pad_values: optional dict `key -> value` for further keys to pad, or
            other padding values (e.g. `{"labels": -100}` for token labels the
            loss ignores).

    Returns:
        A new dict with the same keys; sequence arrays have length
        `bucket_length(L, buckets)`.

    Examples:

    >>> batch = {"token_ids": np.ones((2, 20), "int32"),
    ...          "padding_mask": np.ones((2, 20), bool)}
    >>> pad_to_bucket(batch, (16, 32))["token_ids"].shape
    (2, 32)
    """
    if "token_ids" not in batch:
        raise ValueError(f"`batch` must have a `token_ids` entry. Received keys: {sorted(batch)}")
    values = dict(SEQUENCE_INPUTS)
    values.update(pad_values or {})
    length = np.shape(batch["token_ids"])[1]
    target = bucket_length(length, buckets)
    padded = {}
    for key, array in batch.items():
        if key not in values or target == length:
            padded[key] = array
            continue
        array = np.asarray(array)
        if array.ndim < 2 or array.shape[1] != length:
            raise ValueError(
                f"`{key}` must have shape (batch_size, {length}, ...) like `token_ids`. "
                f"Received: {key}.shape={array.shape}"
            )
        widths = [(0, 0)] * array.ndim
        widths[1] = (0, target - length)
        padded[key] = np.pad(array, widths, constant_values=values[key])
    return padded


def pad_rows(batch, num_rows):
    """Pads the batch axis to `num_rows` by repeating row 0 (a valid input).

    Repeating a real row rather than adding all-padding rows keeps every row's
    attention well defined; the extra outputs are dropped by the caller.
    """
    rows = len(batch["token_ids"])
    if rows == num_rows:
        return batch
    repeats = np.zeros(num_rows, dtype=np.int64)
    repeats[:rows] = np.arange(rows)
    return {key: np.asarray(array)[repeats] for key, array in batch.items()}
