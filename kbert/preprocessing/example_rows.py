"""Examples as rows: one row per plain example, one per choice for multiple choice.

`BucketedDataset` takes both: a plain example is a 1-D id array, a multiple-choice
example a tuple of them (one per candidate ending), batched as (B, C, L).
"""

import numpy as np


def example_rows(ids):
    """One example's ids: a 1-D int32 array, or for multiple choice a tuple of them."""
    if isinstance(ids, (list, tuple)) and len(ids) and np.ndim(ids[0]) == 1:
        return tuple(np.asarray(row, dtype=np.int32) for row in ids)
    return np.asarray(ids, dtype=np.int32)


def longest_row(ids):
    """The length of an example's longest row."""
    return max(len(row) for row in ids) if isinstance(ids, tuple) else len(ids)


def zero_rows(ids):
    """Zeros shaped like an example's ids (its segment ids when none are given)."""
    return tuple(map(np.zeros_like, ids)) if isinstance(ids, tuple) else np.zeros_like(ids)


def choice_count(examples):
    """None for plain rows; the number of choices every multiple-choice example has."""
    counts = {len(ids) if isinstance(ids, tuple) else None for ids in examples}
    if len(counts) > 1:
        shown = sorted(counts, key=lambda count: -1 if count is None else count)
        raise ValueError(
            "Every example of a dataset must have the same number of choices (None for "
            f"plain rows). Received: {shown}"
        )
    return counts.pop()


def check_row_lengths(segment_ids, token_ids):
    """Raises ValueError unless every example's segment ids are shaped like its token ids."""
    if len(segment_ids) != len(token_ids):
        raise ValueError(
            f"`segment_ids` must have one entry per example ({len(token_ids)}). "
            f"Received: {len(segment_ids)} entries"
        )
    for index, (segments, ids) in enumerate(zip(segment_ids, token_ids)):
        if [len(row) for row in as_rows(segments)] != [len(row) for row in as_rows(ids)]:
            raise ValueError(
                f"`segment_ids` entry {index} must be as long as its token_ids. Received: "
                f"lengths {[len(row) for row in as_rows(segments)]}, token_ids "
                f"{[len(row) for row in as_rows(ids)]}"
            )


def as_rows(ids):
    """An example's rows: its choices, or the one row of a plain example."""
    return ids if isinstance(ids, tuple) else (ids,)
