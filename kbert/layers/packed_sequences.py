"""Attention masks and position ids for packed rows: several sequences in one row.

Shape legend: B = batch, L = row length.

A packed row holds sequences one after the other, padding last; `sequence_index` (B, L)
numbers them per token: 1 for the row's first sequence, 2 for the second, ..., 0 for
padding. Each sequence must be contiguous, as `kbert.pretraining.SequencePacker` makes
them. These functions use `keras.ops` only, so they run inside the compiled step on
every backend.
"""

from keras import ops


def packed_attention_mask(sequence_index):
    """The block-diagonal mask: a token sees the tokens of its own sequence only.

    Padding tokens (index 0) see each other, so no query row is empty: the softmax of
    every row stays finite on every backend (an all-masked row gives NaN in PyTorch's
    kernels), and real tokens never see padding.

    Args:
        sequence_index: int tensor (B, L).

    Returns:
        Bool tensor (B, 1, L, L), True where query `t` may attend to key `s`.
    """
    sequence_index = ops.cast(sequence_index, "int32")
    same = ops.equal(sequence_index[:, :, None], sequence_index[:, None, :])  # (B, L, L)
    return same[:, None, :, :]  # (B, 1, L, L)


def packed_position_ids(sequence_index):
    """Position ids that restart at 0 at the first token of every packed sequence.

    The position of a token is the number of tokens of its sequence before it, counted
    from the same equality table the attention mask uses (no cumulative maximum in
    `keras.ops`). Padding tokens get 0.

    Args:
        sequence_index: int tensor (B, L).

    Returns:
        Int32 tensor (B, L).
    """
    sequence_index = ops.cast(sequence_index, "int32")
    length = ops.shape(sequence_index)[1]
    same = ops.equal(sequence_index[:, :, None], sequence_index[:, None, :])  # (B, L, L)
    earlier = ops.less(
        ops.arange(length, dtype="int32")[None, :], ops.arange(length, dtype="int32")[:, None]
    )  # (L, L): key s before query t
    before = ops.sum(ops.cast(ops.logical_and(same, earlier[None]), "int32"), axis=-1)  # (B, L)
    return ops.where(sequence_index > 0, before, 0)
