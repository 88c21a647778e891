"""The per-example columns of a `BucketedDataset` (labels, sample weights, extra inputs),
checked against its examples and stored as the batches read them."""

import numpy as np


def prepared_labels(leaf, lengths):
    """One leaf of the labels: an array with one entry per example, or (per-token
    labels) a list of int32 rows, each as long as its example.

    Args:
        leaf: an array, or a sequence of per-example labels or per-token rows.
        lengths: the examples' token counts.
    """
    if isinstance(leaf, np.ndarray) and leaf.dtype != object:
        per_token = False
    else:
        leaf = list(leaf)
        per_token = len(leaf) > 0 and np.ndim(leaf[0]) == 1
    if per_token:
        leaf = [np.asarray(row, dtype=np.int32) for row in leaf]
        _check_lengths("per-token labels", leaf, lengths)
        return leaf
    leaf = np.asarray(leaf)
    if len(leaf) != len(lengths):
        raise ValueError(
            f"`labels` must have one entry per example ({len(lengths)}). "
            f"Received: {len(leaf)} entries"
        )
    return leaf


def prepared_weights(leaf, count):
    """One leaf of the sample weights as float32, one weight per example of `count`."""
    leaf = np.asarray(leaf)
    if leaf.shape != (count,):
        raise ValueError(
            f"`sample_weights` must have one weight per example ({count}). "
            f"Received: shape {leaf.shape}"
        )
    return leaf.astype(np.float32)


def prepared_extra_inputs(extra_inputs, count):
    """`{name: [int32 row per example]}` of extra inputs (None for none), checked to
    have one row per example of `count`."""
    prepared = {
        name: [np.asarray(row, dtype=np.int32).reshape(-1) for row in rows]
        for name, rows in (extra_inputs or {}).items()
    }
    for name, rows in prepared.items():
        if len(rows) != count:
            raise ValueError(
                f"`extra_inputs[{name!r}]` must have one entry per example "
                f"({count}). Received: {len(rows)} entries"
            )
    return prepared


def _check_lengths(name, arrays, lengths):
    if len(arrays) != len(lengths):
        raise ValueError(
            f"`{name}` must have one entry per example ({len(lengths)}). "
            f"Received: {len(arrays)} entries"
        )
    for index, (array, length) in enumerate(zip(arrays, lengths)):
        if len(array) != length:
            raise ValueError(
                f"`{name}` entry {index} must be as long as its token_ids ({length}). "
                f"Received: length {len(array)}"
            )
