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
