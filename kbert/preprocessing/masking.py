"""Masked-LM masking as in BERT, vectorised over a batch with numpy.

The recipe of google-research/bert's `create_pretraining_data.py`: in each row,
`round(masked_lm_prob * n)` of the `n` maskable tokens are chosen at random (at least
one, at most `max_predictions_per_seq`); a chosen token becomes `[MASK]` 80% of the
time, a random token 10% of the time, and stays unchanged 10% of the time. The model
predicts the original token at every chosen position.

Deliberate differences from the original:
- `n` counts only maskable tokens. The original rounds 15% of the whole length,
  `[CLS]` and `[SEP]` included, which masks a little more than 15% of short rows.
- Random replacements are drawn from the vocabulary without the special tokens; the
  original could put `[CLS]`, `[PAD]` or `[unused7]` into the text.
- With whole-word masking, a `##` piece right after `[SEP]` (the front of segment B cut
  by truncation) starts a word of its own instead of joining the last word of A.

`kbert.pretraining.DynamicMasking` implements the same rule with `keras.ops` for use
inside a compiled train step; both compute the per-row count in float32 so that they
choose exactly as many tokens for the same row.
"""

import re

import numpy as np

from kbert.argument_checks import check_fraction, check_integer
from kbert.tokenizer.bert_tokenizer import CONTINUING_SUBWORD_PREFIX
from kbert.tokenizer.vocabulary import check_ids_in_vocabulary

# 80% [MASK], 10% random token, 10% unchanged: thresholds on one uniform draw.
MASK_TOKEN_FRACTION = 0.8
RANDOM_TOKEN_FRACTION = 0.1

_UNUSED_TOKEN = re.compile(r"\[unused\d+\]")


def mask_tokens(
    token_ids,
    rng,
    *,
    mask_token_id,
    special_token_ids,
    vocabulary_size,
    masked_lm_prob=0.15,
    max_predictions_per_seq=20,
    word_continuation=None,
):
    """Chooses masked-LM predictions for a batch and applies the 80/10/10 rule.

    Args:
        token_ids: int array `(B, L)`, encoded and padded sequences.
        rng: a `numpy.random.Generator`; the only source of randomness.
        mask_token_id: the id of `[MASK]`.
        special_token_ids: ids that are never chosen and never used as random
            replacements: at least `[PAD]`, `[CLS]` and `[SEP]` (see
            `special_token_ids_of`).
        vocabulary_size: the number of ids; random replacements lie below it.
        masked_lm_prob: the fraction of maskable tokens to predict.
        max_predictions_per_seq: `P`, the most predictions per row, and the width of
            the returned `mask_*` arrays.
        word_continuation: `None`, or a bool array `(B, L)` that is True on word pieces
            continuing a word (`##` pieces): whole-word masking, where all pieces of a
            word are chosen or none. Words are chosen greedily in random order, and a
            word that would exceed the row's count is skipped, as in the original.

    Returns:
        A dict of numpy arrays: `token_ids` `(B, L)` int32 with the replacements made;
        `mask_positions` `(B, P)` int32, the chosen positions in increasing order, then
        zeros; `mask_ids` `(B, P)` int32, the original tokens there, then zeros;
        `mask_weights` `(B, P)` float32, 1 on chosen positions and 0 on the padding.

    Examples:

    >>> rng = np.random.default_rng(0)
    >>> masked = mask_tokens(
    ...     batch["token_ids"], rng, mask_token_id=4, special_token_ids=[0, 1, 2, 3, 4],
    ...     vocabulary_size=30522,
    ... )
    >>> masked["mask_positions"].shape
    (32, 20)
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            "`rng` must be a numpy.random.Generator (numpy.random.default_rng(seed)). "
            f"Received: rng of type {type(rng).__name__}"
        )
    special_table, replacement_ids = check_masking_arguments(
        vocabulary_size, mask_token_id, special_token_ids, masked_lm_prob, max_predictions_per_seq
    )
    token_ids = _checked_token_ids(token_ids, vocabulary_size)
    candidate = ~special_table[token_ids]
    word_start = _word_starts(candidate, word_continuation)
    budget = predictions_per_row(candidate.sum(axis=1), masked_lm_prob, max_predictions_per_seq)
    # The draws come in a fixed order (word order, then the 80/10/10 decision, then the
    # random tokens): what a seed masks is part of exact resume.
    chosen = _choose_positions(rng, candidate, word_start, budget, word_continuation is not None)
    mask_positions, mask_ids, used_slot = _prediction_slots(
        token_ids, chosen, max_predictions_per_seq
    )
    return {
        "token_ids": _replace_chosen(rng, token_ids, chosen, mask_token_id, replacement_ids),
        "mask_positions": mask_positions,
        "mask_ids": mask_ids.astype(np.int32),
        "mask_weights": used_slot.astype(np.float32),
    }


def _checked_token_ids(token_ids, vocabulary_size):
    token_ids = np.asarray(token_ids)
    if token_ids.ndim != 2 or not np.issubdtype(token_ids.dtype, np.integer):
        raise ValueError(
            "`token_ids` must be a 2-D integer array (B, L). Received: token_ids with "
            f"shape {token_ids.shape} and dtype {token_ids.dtype}"
        )
    check_ids_in_vocabulary(token_ids, vocabulary_size)
    return token_ids


def _word_starts(candidate, word_continuation):
    """(B, L) bool: the maskable tokens that start a word (every one without whole words)."""
    if word_continuation is None:
        return candidate
    word_continuation = np.asarray(word_continuation, dtype=bool)
    if word_continuation.shape != candidate.shape:
        raise ValueError(
            "`word_continuation` must have the shape of `token_ids`. Received: "
            f"{word_continuation.shape} and {candidate.shape}"
        )
    follows_candidate = np.zeros_like(candidate)
    follows_candidate[:, 1:] = candidate[:, :-1]
    return candidate & ~(word_continuation & follows_candidate)


def _choose_positions(rng, candidate, word_start, budget, whole_words):
    """(B, L) bool: the positions to predict, `budget[row]` of them at most per row."""
    batch_size, length = candidate.shape
    rows = np.arange(batch_size)[:, None]
    positions = np.arange(length)[None, :]
    # Every maskable token belongs to the word starting at the last start before it.
    own_start = np.maximum.accumulate(np.where(word_start, positions, 0), axis=1)
    # Words in a random order: a random score per word start, non-starts last.
    scores = np.where(word_start, rng.random((batch_size, length)), np.inf)
    order = np.argsort(scores, axis=1)
    if not whole_words:
        chosen_start = np.zeros_like(candidate)
        chosen_start[rows, order] = positions < budget[:, None]
    else:
        flat_start = (rows * length + own_start)[candidate]
        word_length = np.bincount(flat_start, minlength=batch_size * length).reshape(
            batch_size, length
        )
        chosen_start = _choose_words_greedily(order, word_start, word_length, budget)
    return candidate & chosen_start[rows, own_start]


def _prediction_slots(token_ids, chosen, max_predictions_per_seq):
    """`(mask_positions, mask_ids, used_slot)`, each (B, P): the chosen positions first,
    in increasing order, their original tokens, and which slots are used."""
    length = token_ids.shape[1]
    positions = np.arange(length)[None, :]
    # `length` marks the unused slots.
    slots = np.sort(np.where(chosen, positions, length), axis=1)[:, :max_predictions_per_seq]
    if slots.shape[1] < max_predictions_per_seq:
        slots = np.pad(
            slots, ((0, 0), (0, max_predictions_per_seq - slots.shape[1])), constant_values=length
        )
    used_slot = slots < length
    mask_positions = np.where(used_slot, slots, 0).astype(np.int32)
    mask_ids = np.where(used_slot, np.take_along_axis(token_ids, mask_positions, axis=1), 0)
    return mask_positions, mask_ids, used_slot


def _replace_chosen(rng, token_ids, chosen, mask_token_id, replacement_ids):
    """The token ids with BERT's 80/10/10 rule applied at the chosen positions (int32)."""
    decision = rng.random(token_ids.shape)
    random_ids = replacement_ids[rng.integers(len(replacement_ids), size=token_ids.shape)]
    masked = np.where(chosen & (decision < MASK_TOKEN_FRACTION), mask_token_id, token_ids)
    replace_randomly = (
        chosen
        & (decision >= MASK_TOKEN_FRACTION)
        & (decision < MASK_TOKEN_FRACTION + RANDOM_TOKEN_FRACTION)
    )
    return np.where(replace_randomly, random_ids, masked).astype(np.int32)


def _choose_words_greedily(order, word_start, word_length, budget):
    """Walks the words of every row in `order`, taking each that still fits the budget."""
    batch_size = order.shape[0]
    row_index = np.arange(batch_size)
    chosen_start = np.zeros_like(word_start)
    used = np.zeros(batch_size, dtype=np.int64)
    for column in range(int(word_start.sum(axis=1).max(initial=0))):
        start = order[:, column]
        size = word_length[row_index, start]
        take = word_start[row_index, start] & (used + size <= budget)
        chosen_start[row_index[take], start[take]] = True
        used += np.where(take, size, 0)
        if np.all(used >= budget):
            break
    return chosen_start


def predictions_per_row(num_candidates, masked_lm_prob, max_predictions_per_seq):
    """How many tokens a row with `num_candidates` maskable tokens gets masked.

    `round(masked_lm_prob * n)` (half to even, in float32 so that the keras.ops
    version agrees exactly), at least 1 and at most `max_predictions_per_seq`; 0 for a
    row with nothing to mask.
    """
    num_candidates = np.asarray(num_candidates)
    wanted = np.rint(num_candidates.astype(np.float32) * np.float32(masked_lm_prob))
    wanted = np.clip(wanted.astype(np.int64), 1, max_predictions_per_seq)
    return np.where(num_candidates > 0, wanted, 0)


def check_masking_arguments(
    vocabulary_size, mask_token_id, special_token_ids, masked_lm_prob, max_predictions_per_seq
):
    """Validates the masking settings.

    Returns:
        `(special_table, replacement_ids)`: a bool array `(vocabulary_size,)` that is
        True on special ids, and the int32 ids random replacements are drawn from.
    """
    check_integer("vocabulary_size", vocabulary_size, 1)
    check_integer("max_predictions_per_seq", max_predictions_per_seq, 1)
    check_fraction("masked_lm_prob", masked_lm_prob, allow_zero=False)
    check_integer("mask_token_id", mask_token_id, 0)
    if mask_token_id >= vocabulary_size:
        raise ValueError(
            f"`mask_token_id` must be an id in [0, {vocabulary_size}). "
            f"Received: mask_token_id={mask_token_id!r}"
        )
    special_token_ids = np.asarray(list(special_token_ids))
    if special_token_ids.size and (
        not np.issubdtype(special_token_ids.dtype, np.integer)
        or ((special_token_ids < 0) | (special_token_ids >= vocabulary_size)).any()
    ):
        raise ValueError(
            f"`special_token_ids` must be ids in [0, {vocabulary_size}). "
            f"Received: special_token_ids={special_token_ids.tolist()!r}"
        )
    special_table = np.zeros(vocabulary_size, dtype=bool)
    special_table[special_token_ids.astype(np.int64)] = True
    replacement_ids = np.flatnonzero(~special_table).astype(np.int32)
    if len(replacement_ids) == 0:
        raise ValueError(
            "`special_token_ids` covers the whole vocabulary, so there is nothing to mask. "
            f"Received: vocabulary_size={vocabulary_size}"
        )
    return special_table, replacement_ids


def special_token_ids_of(tokenizer):
    """The ids a `BertTokenizer` never wants masked or drawn as random replacements.

    Its five special tokens (`[PAD]`, `[UNK]`, `[CLS]`, `[SEP]`, `[MASK]`) and the
    `[unusedN]` placeholders, which never occur in tokenized text.
    """
    ids = {
        tokenizer.pad_token_id,
        tokenizer.unk_token_id,
        tokenizer.cls_token_id,
        tokenizer.sep_token_id,
        tokenizer.mask_token_id,
    }
    ids.update(
        index for index, token in enumerate(tokenizer.vocabulary) if _UNUSED_TOKEN.fullmatch(token)
    )
    return sorted(ids)


def continuation_table(tokenizer):
    """A bool array `(vocabulary_size,)`, True on `##` pieces (for whole-word masking).

    Pretraining data hold token ids only, so a word's pieces are found by id. WordPiece
    starts every piece after a word's first with `##`, and a word never starts with one
    (`#` is punctuation, a word of its own), so this marks exactly the pieces whose
    `Encoding.word_ids` repeat the previous piece's.
    """
    return np.array(
        [token.startswith(CONTINUING_SUBWORD_PREFIX) for token in tokenizer.vocabulary],
        dtype=bool,
    )
