"""Extractive question answering over contexts of any length.

The context is cut into windows (`kbert.data.qa_windows`), all windows of one call
run as one padded batch, and the best spans are searched in every window at once:
a span starts at a context token where its window gives the most context, ends at a
context token at most `max_answer_length - 1` tokens later, and scores
`start_logit + end_logit`, as in BERT's SQuAD code. Its text is the caller's
context sliced at the tokens' character offsets, so `context[start:end] == text`.
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

    flat = valid_scores.reshape(-1)
    count = min(top_k, int(valid.sum()))
    best = np.argpartition(-flat, count - 1)[:count]
    best = best[np.argsort(-flat[best], kind="stable")]
    answers = []
    for window, start, extra in zip(*np.unravel_index(best, valid.shape)):
        end = start + extra
        start_char, end_char = int(offsets[window, start, 0]), int(offsets[window, end, 1])
        answers.append(
            Answer(
                text=context[start_char:end_char],
                start=start_char,
                end=end_char,
                score=float(scores[window, start, extra]),
                probability=float(span_probabilities[window, start, extra]),
                start_probability=float(start_probabilities[window, start]),
                end_probability=float(end_probabilities[window, end]),
                window=int(window),
            )
        )
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


def _window_logits(model, tokenizer, windows, batch_size):
    """Start and end logits `(W, L)` of every window, L the windows' bucket length."""
    starts, ends = [None] * len(windows), [None] * len(windows)
    batches = predict_in_batches(model, tokenizer, windows, batch_size, same_length=True)
    for rows, outputs in batches:
        for index, row in enumerate(rows):
            starts[row] = outputs["start_logits"][index]
            ends[row] = outputs["end_logits"][index]
    return np.stack(starts).astype(np.float32), np.stack(ends).astype(np.float32)
