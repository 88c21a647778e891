"""A batch of a `BucketedDataset` on the host: its examples padded into dense arrays."""

import numpy as np

from kbert.preprocessing.example_rows import as_rows
from kbert.preprocessing.data_parallel_rows import IGNORED_LABEL


def padded_inputs(token_ids, segment_ids, rows, length, choices, pad_token_id):
    """`token_ids`, `segment_ids`, `padding_mask` of examples `rows`: (B, L), or
    (B, C, L) for multiple-choice examples (each choice padded on its own).

    Args:
        token_ids: every example's token ids (a row, or one row per choice).
        segment_ids: every example's segment ids, shaped like `token_ids`.
        rows: the indices of the batch's examples.
        length: the padded length L.
        choices: the number of choices C of multiple-choice examples; None for others.
        pad_token_id: the `[PAD]` id.
    """
    shape = (len(rows), length) if choices is None else (len(rows), choices, length)
    token_batch = np.full(shape, pad_token_id, dtype=np.int32)
    segment_batch = np.zeros(shape, dtype=np.int32)
    padding_mask = np.zeros(shape, dtype=np.int32)
    for row, example in enumerate(rows):
        pieces = zip(as_rows(token_ids[example]), as_rows(segment_ids[example]))
        for choice, (ids, segments) in enumerate(pieces):
            at = (row,) if choices is None else (row, choice)
            token_batch[at][: len(ids)] = ids
            segment_batch[at][: len(ids)] = segments
            padding_mask[at][: len(ids)] = 1
    return {"token_ids": token_batch, "segment_ids": segment_batch, "padding_mask": padding_mask}


def extra_input_batch(values, rows):
    """The rows of one extra input for examples `rows`, padded with 0 to the longest."""
    width = max(max(len(values[example]) for example in rows), 1)
    batch = np.zeros((len(rows), width), dtype=np.int32)
    for row, example in enumerate(rows):
        batch[row, : len(values[example])] = values[example]
    return batch


def label_batch(leaf, rows, length, real, lengths):
    """The labels of examples `rows` from one leaf of the labels.

    Rows from `real` on are fillers (data parallelism's): per-token, all ignored.
    Per-token labels (a list of rows) are padded to `length` with `IGNORED_LABEL`;
    `lengths` are the examples' token counts.
    """
    if isinstance(leaf, np.ndarray):
        return leaf[rows]
    batch = np.full((len(rows), length), IGNORED_LABEL, dtype=np.int32)
    for row, example in enumerate(rows[:real]):
        batch[row, : lengths[example]] = leaf[example]
    return batch
