"""The tiny model size and random inputs that the model tests share.

Imported by name (`from model_helpers import TINY`): pytest puts tests/ on the import
path, as for the other helper modules here.
"""

import numpy as np

TINY = dict(
    vocabulary_size=97,
    hidden_size=32,
    num_layers=2,
    num_heads=4,
    intermediate_size=37,
    max_positions=24,
    type_vocabulary_size=2,
    hidden_dropout=0.0,
    attention_dropout=0.0,
)


def make_inputs(batch_size=3, sequence_length=10, vocabulary_size=97, seed=0, num_masks=0):
    """Random inputs with different real lengths per row (row 0 is full length)."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(5, vocabulary_size, size=(batch_size, sequence_length)).astype("int32")
    lengths = np.linspace(sequence_length, max(3, sequence_length // 2), batch_size).astype(int)
    padding_mask = (np.arange(sequence_length)[None, :] < lengths[:, None]).astype("int32")
    token_ids = np.where(padding_mask == 1, token_ids, 0).astype("int32")
    segment_ids = np.zeros_like(token_ids)
    for row, length in enumerate(lengths):
        segment_ids[row, length // 2 : length] = 1
    inputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
    if num_masks:
        inputs["mask_positions"] = np.stack(
            [rng.choice(int(length), size=num_masks, replace=False) for length in lengths]
        ).astype("int32")
    return inputs
