"""How probable given words are at each `[MASK]` of a text, words of several pieces too.

`fill_mask(targets=...)` scores words of one vocabulary token. A word the tokenizer
splits ("strode" -> "str", "##ode") fills several positions, so it is scored by the
chain rule over its pieces, each predicted with the pieces before it in place:

    P(str ##ode) = P(str | [MASK] [MASK]) * P(##ode | str [MASK])

the `[MASK]` of the text widened to as many masks as the word has pieces (the
text's other masks stay masked). Every step of every word and mask is an input of
its own, known in advance, so all of them run as padded batches, one forward pass
per batch, with the masked-LM head at the one position each scores.
"""

from dataclasses import dataclass

import numpy as np

from kbert.argument_checks import check_positive_int
from kbert.inference.fill_mask import check_masks
from kbert.inference.model_io import model_buckets
from kbert.inference.model_io import pad_batch
from kbert.inference.model_io import predict
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import sequence_limit
from kbert.inference.model_io import softmax
from kbert.inference.results import MaskWordScores
from kbert.inference.results import WordScore
from kbert.inference.results import substitute_spans
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.preprocessing.length_buckets import length_sorted_batches
from kbert.preprocessing.text_encoding import encode_texts


@dataclass(frozen=True, eq=False)
class _Step:
    """One model input: the text's tokens with a word's first pieces filled in."""

    token_ids: np.ndarray
    segment_ids: np.ndarray
    query: int  # the position whose piece it scores
    piece_id: int
    owner: tuple  # (mask index, word index)

    def __len__(self):
        return len(self.token_ids)


def score_words(model, tokenizer, text, words, batch_size=DEFAULT_BATCH_SIZE):
    """The probability of each of `words` at each `[MASK]` of `text`.

    Args:
        model: a masked-LM model (`BertMaskedLM`), as `fill_mask` takes.
        tokenizer: a `BertTokenizer`; None uses `model.tokenizer`.
        text: a string with at least one `[MASK]`, as `fill_mask` takes it.
        words: a list of words. A word of one piece gets the probability
            `fill_mask(text, targets=[word])` gives it; a word of n pieces the
            product of its pieces' probabilities, each given the pieces before it,
            at n masks in place of the one. Words are scored as given: a
            lower-casing tokenizer gives "Paris" and "paris" the same pieces and
            score, and both are listed.
        batch_size: inputs per forward pass.

    Returns:
        A tuple of `MaskWordScores`, one per mask in text order, each with a
        `WordScore` per word in the given order. A word with a piece the vocabulary
        lacks, or too long to fit the model's limit at a mask, gets probability
        None and the reason.

    Examples:

    >>> (mask,) = score_words(model, None, "He [MASK] into the room.", ["ran", "strode"])
    >>> [(score.word, score.pieces) for score in mask.scores]
    [('ran', ('ran',)), ('strode', ('str', '##ode'))]
    """
    tokenizer = resolve_tokenizer(model, tokenizer)
    if not isinstance(text, str):
        raise ValueError(
            f"`text` must be a string. Received: text={text!r} of type {type(text).__name__}"
        )
    words = _checked_words(words)
    batch_size = check_positive_int("batch_size", batch_size)
    limit = sequence_limit(model, tokenizer)
    (encoding,) = encode_texts(tokenizer, [text], None, limit)
    check_masks(tokenizer, [text], [encoding])
    token_ids = np.asarray(encoding.token_ids, dtype=np.int32)
    positions = np.flatnonzero(token_ids == tokenizer.mask_token_id)
    pieces = [tuple(tokenizer.tokenize(word)) for word in words]
    steps, reasons = _chain_steps(tokenizer, token_ids, positions, pieces, limit)
    probabilities = _chain_probabilities(
        model, tokenizer, steps, (len(positions), len(words)), batch_size
    )
    results = []
    for mask, position in enumerate(positions):
        start, end = (int(offset) for offset in encoding.offsets[position])
        scores = tuple(
            WordScore(
                word=word,
                pieces=pieces[index],
                probability=(
                    None if (mask, index) in reasons else float(probabilities[mask, index])
                ),
                text=substitute_spans(text, [(start, end)], [word]),
                reason=reasons.get((mask, index), ""),
            )
            for index, word in enumerate(words)
        )
        results.append(MaskWordScores(int(position), start, end, scores))
    return tuple(results)


def _chain_steps(tokenizer, token_ids, positions, pieces, limit):
    """The model inputs of the chain rule: one `_Step` per piece of every word at every mask.

    Returns:
        `(steps, reasons)`: the steps, and `{(mask, word): why}` for the words that
        cannot be scored at a mask (they get no steps).
    """
    steps, reasons = [], {}
    for mask, position in enumerate(positions):
        for index, word_pieces in enumerate(pieces):
            reason = _unscorable(tokenizer, word_pieces, len(token_ids), limit)
            if reason:
                reasons[mask, index] = reason
                continue
            ids = [tokenizer.token_to_id(piece) for piece in word_pieces]
            for known in range(len(ids)):
                masks = [tokenizer.mask_token_id] * (len(ids) - known)
                filled = np.concatenate(
                    [token_ids[:position], ids[:known], masks, token_ids[position + 1 :]]
                ).astype(np.int32)
                owner = (mask, index)
                steps.append(
                    _Step(filled, np.zeros_like(filled), position + known, ids[known], owner)
                )
    return steps, reasons


def _chain_probabilities(model, tokenizer, steps, shape, batch_size):
    """(masks, words) float64: the product of each owner's step probabilities."""
    probabilities = np.ones(shape, dtype=np.float64)
    buckets = model_buckets(model)
    for rows in length_sorted_batches([len(step) for step in steps], batch_size):
        batch = [steps[row] for row in rows]
        inputs = pad_batch(tokenizer, batch, buckets)
        queries = np.zeros((len(inputs["token_ids"]), 1), dtype=np.int32)
        queries[: len(batch), 0] = [step.query for step in batch]
        inputs["mask_positions"] = queries
        piece_probabilities = softmax(predict(model, inputs)[: len(batch), 0])  # (R, V)
        for row, step in enumerate(batch):
            probabilities[step.owner] *= float(piece_probabilities[row, step.piece_id])
    return probabilities


def _checked_words(words):
    if isinstance(words, str):
        words = [words]
    if isinstance(words, bytes) or not hasattr(words, "__iter__"):
        raise ValueError(f"`words` must be a list of words. Received: words={words!r}")
    words = list(words)
    if not words or not all(isinstance(word, str) for word in words):
        raise ValueError(f"`words` must be a non-empty list of strings. Received: words={words!r}")
    return words


def _unscorable(tokenizer, pieces, length, limit):
    """Why a word of these pieces cannot be scored in a text of `length` tokens, or ""."""
    if not pieces:
        return "it has no word pieces (only spaces or characters the tokenizer drops)"
    if tokenizer.unk_token in pieces:
        return f"the vocabulary lacks a piece of it (it tokenizes as {list(pieces)})"
    if length + len(pieces) - 1 > limit:
        return (
            f"its {len(pieces)} pieces in place of one [MASK] would make the text longer "
            f"than the model's limit of {limit} tokens"
        )
    return ""
