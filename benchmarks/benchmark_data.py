"""The random batch every engine of `gpu_benchmark.py` trains and predicts on.

Seeded NumPy, so that each engine (each in its own process) sees the same numbers.
Sequences are full length (no padding): the benchmark measures the model, not the
padding strategy, and every engine receives the same all-ones padding mask.
"""

import numpy as np

# Ids below this are left to special tokens ([PAD], [UNK], [CLS], [SEP], [MASK]).
FIRST_ORDINARY_ID = 5
NUM_CLASSES = 2


def random_batch(batch_size, seq_length, vocabulary_size, masked_positions, seed=0):
    """One batch of inputs and labels for every workload.

    Returns:
        A dict of NumPy arrays: `token_ids`, `segment_ids`, `padding_mask` (B, L)
        int32; `labels` (B,) class ids; `mask_positions` (B, P) sorted distinct
        positions in [1, L - 1) (never [CLS] or the last token); `mask_ids` (B, P) the
        token ids there; `mask_weights` (B, P) ones; `next_sentence_labels` (B,).
    """
    if masked_positions > seq_length - 2:
        raise ValueError(
            f"`masked_positions` must leave [CLS] and the last token unmasked: at most "
            f"{seq_length - 2} for seq_length={seq_length}. "
            f"Received: masked_positions={masked_positions}"
        )
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(
        FIRST_ORDINARY_ID, vocabulary_size, size=(batch_size, seq_length), dtype=np.int32
    )
    segment_ids = np.zeros((batch_size, seq_length), dtype=np.int32)
    segment_ids[:, seq_length // 2 :] = 1
    mask_positions = np.sort(
        np.stack(
            [
                rng.choice(np.arange(1, seq_length - 1), size=masked_positions, replace=False)
                for _ in range(batch_size)
            ]
        ),
        axis=1,
    ).astype(np.int32)
    return {
        "token_ids": token_ids,
        "segment_ids": segment_ids,
        "padding_mask": np.ones((batch_size, seq_length), dtype=np.int32),
        "labels": rng.integers(0, NUM_CLASSES, size=batch_size, dtype=np.int32),
        "mask_positions": mask_positions,
        "mask_ids": np.take_along_axis(token_ids, mask_positions, axis=1),
        "mask_weights": np.ones((batch_size, masked_positions), dtype=np.float32),
        "next_sentence_labels": rng.integers(0, 2, size=batch_size, dtype=np.int32),
    }
