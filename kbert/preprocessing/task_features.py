"""Model inputs and labels built from a task's examples."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class TaskFeatures:
    """Variable-length model inputs and labels for a list of examples.

    One row per model input: an example, or for question answering one window of an
    example. `BucketedDataset(features.token_ids, features.segment_ids, features.labels)`
    batches them.

    Args:
        token_ids: list of int32 arrays `(L_i,)`, segment-packed `[CLS] ... [SEP]`.
        segment_ids: list of int32 arrays `(L_i,)`.
        labels: the labels in `BucketedDataset`'s structure: an int array with a class
            id per row, a list of per-token int arrays (-100 where ignored), or a dict
            of such; None when the examples carry no labels.
        example_indices: int array, the example each row came from.
        word_positions: for token classification, one int array per row with the
            index of each word's first sub-word token (-1 for a word that has no
            token, e.g. after truncation); None for other tasks.
        mask_positions: for masked-LM prediction, one int array per row with the
            positions of its `[MASK]` tokens; None otherwise.
    """

    token_ids: list
    segment_ids: list
    labels: object
    example_indices: np.ndarray
    word_positions: list = None
    mask_positions: list = None

    def __len__(self):
        return len(self.token_ids)


def concatenated_features(parts, example_counts):
    """One `TaskFeatures` of `parts` in order; `example_counts[i]` examples made `parts[i]`
    (its `example_indices` are shifted past the examples before it)."""
    if len(parts) == 1:
        return parts[0]
    offsets = np.cumsum([0] + list(example_counts[:-1]))
    return TaskFeatures(
        token_ids=[row for part in parts for row in part.token_ids],
        segment_ids=[row for part in parts for row in part.segment_ids],
        labels=_concatenated_labels([part.labels for part in parts]),
        example_indices=np.concatenate(
            [part.example_indices + offset for part, offset in zip(parts, offsets)]
        ),
        word_positions=_concatenated_rows([part.word_positions for part in parts]),
        mask_positions=_concatenated_rows([part.mask_positions for part in parts]),
    )


def _concatenated_rows(rows):
    if all(part is None for part in rows):
        return None
    return [row for part in rows for row in part]


def _concatenated_labels(labels):
    first = labels[0]
    if first is None:
        return None
    if isinstance(first, dict):
        return {name: _concatenated_labels([part[name] for part in labels]) for name in first}
    if isinstance(first, np.ndarray):
        return np.concatenate(labels)
    return [row for part in labels for row in part]
