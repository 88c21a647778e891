"""Extractive question answering over contexts of any length.

The context is cut into windows (`kbert.data.qa_windows`), all windows of one call
run as one padded batch, and the best spans are searched in every window at once:
a span starts at a context token where its window gives the most context, ends at a
context token at most `max_answer_length - 1` tokens later, and scores
`start_logit + end_logit`, as in BERT's SQuAD code. As the reference post-processing
maps token spans back to whole words of the original text, a span is widened to the
words its first and last tokens belong to (a start on the piece "##sten" of "Austen"
starts at "A"), and spans that widen to the same characters are listed once, with
the best score. Its text is the caller's context sliced at those character offsets,
so `context[start:end] == text`.
"""

import logging
import numbers

import numpy as np

from kbert.argument_checks import check_positive_int
from kbert.data.qa_windows import make_qa_windows
from kbert.inference.model_io import DEFAULT_BATCH_SIZE
from kbert.inference.model_io import predict_in_batches
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import sequence_limit
from kbert.inference.model_io import softmax
from kbert.inference.results import Answer
from kbert.inference.results import AnswerResult
from kbert.tokenizer.bert_tokenizer import CONTINUING_SUBWORD_PREFIX

logger = logging.getLogger("kbert.inference")


def answer(
    model,
    tokenizer,
    question,
    context,
    top_k=1,
    max_answer_length=30,
    doc_stride=128,
    max_length=384,
    max_question_length=64,
    null_threshold=None,
    batch_size=DEFAULT_BATCH_SIZE,
):
    """Finds the `top_k` best answers to `question` in `context`.

    Args:
        model: an extractive QA model (`BertQuestionAnswerer`) whose outputs are
            `start_logits` and `end_logits`, each (B, L).
        tokenizer: a `BertTokenizer`; None uses `model.tokenizer`.
        question: the question string.
        context: the context string, of any length (windowed).
        top_k: number of answers to return, best first.
        max_answer_length: the longest answer, in tokens.
        doc_stride: context tokens between the starts of consecutive windows.
        max_length: tokens per window; capped at the model's `max_positions`.
        max_question_length: longer questions are truncated, with a warning.
        null_threshold: for SQuAD 2.0 models. None always answers. A number
            answers "no answer" (`is_impossible=True`, no answers) when
            `no_answer_score - best span score > null_threshold`.
        batch_size: windows per forward pass.

    Returns:
        An `AnswerResult`. An empty (or whitespace-only) context gives "no answer"
        without running the model.

    Raises:
        ValueError: for a question that leaves no room for the context in a
            window of `max_length` tokens, or an empty question.

    Examples:

    >>> result = model.answer("Who sat?", "The cat sat on the mat.")
    >>> best = result.answers[0]
    >>> best.text, best.start, best.end
    ('The cat', 0, 7)
    >>> result.context[best.start:best.end] == best.text
    True
    """
    tokenizer = resolve_tokenizer(model, tokenizer)
    top_k = check_positive_int("top_k", top_k)
    max_answer_length = check_positive_int("max_answer_length", max_answer_length)
    batch_size = check_positive_int("batch_size", batch_size)
    max_length = check_positive_int("max_length", max_length)
    if null_threshold is not None and (
        isinstance(null_threshold, bool) or not isinstance(null_threshold, numbers.Real)
    ):
        raise ValueError(
            f"`null_threshold` must be None or a number. Received: null_threshold="
            f"{null_threshold!r}"
        )
    limit = sequence_limit(model, tokenizer)
    if max_length > limit:
        logger.debug("max_length=%d capped at the model's limit of %d", max_length, limit)
        max_length = limit

    windows = make_qa_windows(
        tokenizer,
        question,
        context,
        max_length=max_length,
        doc_stride=doc_stride,
        max_question_length=max_question_length,
    )
    if not windows:
        return _no_answer(model, question, context, no_answer_score=None)
    start_logits, end_logits = _window_logits(model, tokenizer, windows, batch_size)
    length = start_logits.shape[1]
    offsets = np.zeros((len(windows), length, 2), dtype=np.int64)
    starts_allowed = np.zeros((len(windows), length), dtype=bool)
    ends_allowed = np.zeros((len(windows), length), dtype=bool)
    real = np.zeros((len(windows), length), dtype=bool)
    for index, window in enumerate(windows):
        offsets[index, : len(window)] = window.offsets
        starts_allowed[index, : len(window)] = window.max_context
        ends_allowed[index, : len(window)] = window.context_mask
        real[index, : len(window)] = True

    # Spans as (window, start token, length - 1): a band, not a full L x L matrix.
    span_lengths = np.arange(max_answer_length)
    end_index = np.arange(length)[:, None] + span_lengths[None, :]  # (L, A)
    in_range = end_index < length
    end_index = np.minimum(end_index, length - 1)
    scores = start_logits[:, :, None] + end_logits[:, end_index]  # (W, L, A)
    valid = starts_allowed[:, :, None] & ends_allowed[:, end_index] & in_range[None]

    no_answer_score = float(np.min(start_logits[:, 0] + end_logits[:, 0]))
    # Never empty: each context token starts a span in the window where it has
    # the most context.
    best_score = float(scores[valid].max())
    if null_threshold is not None and no_answer_score - best_score > null_threshold:
        return _no_answer(model, question, context, no_answer_score)

    # Probabilities over every valid span of every window.
    valid_scores = np.where(valid, scores, -np.inf)
    span_probabilities = softmax(valid_scores.reshape(-1)).reshape(valid.shape)
    start_probabilities = softmax(np.where(real, start_logits, -np.inf))
    end_probabilities = softmax(np.where(real, end_logits, -np.inf))

    # Each span widened to whole words: (W, L, A) start and end token of its words.
    word_start, word_end = _word_edges(tokenizer, windows, length)
    window_rows = np.arange(len(windows))[:, None, None]
    wide_start = np.broadcast_to(word_start[:, :, None], valid.shape)
    wide_end = word_end[window_rows, end_index[None]]
    whole = (
        valid
        & (wide_start >= 0)
        & (wide_end >= 0)
        & (wide_end - wide_start < max_answer_length)
    )
    # A context whose only spans cut words (one long word, a tiny max_answer_length)
    # still gets answers: its token spans as they are.
    if whole.any():
        valid_scores = np.where(whole, scores, -np.inf)
    else:
        wide_start = np.broadcast_to(np.arange(length)[None, :, None], valid.shape)
        wide_end = np.broadcast_to(end_index[None], valid.shape)

    answers = []
    for window, start, extra in _ranked_spans(valid_scores.reshape(-1), valid.shape, top_k):
        first, last = wide_start[window, start, extra], wide_end[window, start, extra]
        start_char, end_char = int(offsets[window, first, 0]), int(offsets[window, last, 1])
        if any((start_char, end_char) == (known.start, known.end) for known in answers):
            continue
        answers.append(
            Answer(
                text=context[start_char:end_char],
                start=start_char,
                end=end_char,
                score=float(scores[window, start, extra]),
                probability=float(span_probabilities[window, start, extra]),
                start_probability=float(start_probabilities[window, start]),
                end_probability=float(end_probabilities[window, start + extra]),
                window=int(window),
            )
        )
        if len(answers) == top_k:
            break
    return AnswerResult(
        question=question,
        context=context,
        answers=tuple(answers),
        no_answer_score=no_answer_score,
        is_impossible=False,
        head_trained=head_trained(model),
    )


def _no_answer(model, question, context, no_answer_score):
    return AnswerResult(
        question=question,
        context=context,
        answers=(),
        no_answer_score=no_answer_score,
        is_impossible=True,
        head_trained=head_trained(model),
    )


def head_trained(model):
    """Whether `model`'s task head came trained from its preset (not freshly initialised)."""
    return not getattr(model, "freshly_initialized_heads", ())


def _ranked_spans(flat_scores, shape, top_k):
    """`(window, start, extra)` of the finite scores, best first, lazily.

    Spans widened to whole words can coincide, so the caller may need more than
    `top_k` of them: they come in growing blocks, each sorted once.
    """
    finite = int(np.isfinite(flat_scores).sum())
    taken, count = 0, min(finite, 4 * top_k)
    while taken < finite:
        best = np.argpartition(-flat_scores, count - 1)[:count]
        best = best[np.argsort(-flat_scores[best], kind="stable")]
        for index in best[taken:]:
            yield np.unravel_index(index, shape)
        taken, count = count, min(finite, 4 * count)


def _word_edges(tokenizer, windows, length):
    """`(word_start, word_end)`, int arrays (W, L): for each context token of each
    window, the first and the last token of its word in that window, or -1 where the
    word runs past the window's edge (another window holds it whole).

    A word is one of BERT's words: its pieces after the first start with "##".
    """
    num_tokens = windows[0].num_context_tokens
    # Context tokens of the whole context: the windows together hold each of them.
    continuation = np.zeros(num_tokens + 1, dtype=bool)
    for window in windows:
        ids = window.token_ids[window.context_mask]
        pieces = [tokenizer.id_to_token(int(token_id)) for token_id in ids]
        continuation[window.context_token_start : window.context_token_end] = [
            piece.startswith(CONTINUING_SUBWORD_PREFIX) for piece in pieces
        ]
    word_start = np.full((len(windows), length), -1, dtype=np.int64)
    word_end = np.full((len(windows), length), -1, dtype=np.int64)
    for row, window in enumerate(windows):
        positions = np.flatnonzero(window.context_mask)  # window index of each context token
        tokens = slice(window.context_token_start, window.context_token_end)
        starts_word = ~continuation[tokens]
        ends_word = ~continuation[window.context_token_start + 1 : window.context_token_end + 1]
        # The latest word start at or before each token; -1 before the first one.
        start_of = np.maximum.accumulate(np.where(starts_word, np.arange(len(positions)), -1))
        # The earliest word end at or after each token; -1 after the last one.
        reverse = np.where(ends_word, np.arange(len(positions)), len(positions))[::-1]
        end_of = np.minimum.accumulate(reverse)[::-1]
        word_start[row, positions] = np.where(start_of >= 0, positions[np.maximum(start_of, 0)], -1)
        word_end[row, positions] = np.where(
            end_of < len(positions), positions[np.minimum(end_of, len(positions) - 1)], -1
        )
    return word_start, word_end


def _window_logits(model, tokenizer, windows, batch_size):
    """Start and end logits `(W, L)` of every window, L the windows' bucket length."""
    starts, ends = [None] * len(windows), [None] * len(windows)
    batches = predict_in_batches(model, tokenizer, windows, batch_size, same_length=True)
    for rows, outputs in batches:
        for index, row in enumerate(rows):
            starts[row] = outputs["start_logits"][index]
            ends[row] = outputs["end_logits"][index]
    return np.stack(starts).astype(np.float32), np.stack(ends).astype(np.float32)
