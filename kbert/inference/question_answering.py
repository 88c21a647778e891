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

import numbers

import numpy as np

from kbert.argument_checks import check_positive_int
from kbert.data.question_windowing import QuestionWindowing
from kbert.inference.window_logits import context_windows
from kbert.inference.window_logits import grouped_window_logits
from kbert.inference.model_io import inference_batch_size
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import softmax
from kbert.inference.results import AnswerResult
from kbert.inference.inference_engine import engine_model
from kbert.inference.results import AnswerSpan
from kbert.preprocessing.text_encoding import questions_and_contexts
from kbert.tokenizer.bert_tokenizer import CONTINUING_SUBWORD_PREFIX


def answer(
    model,
    tokenizer,
    question,
    context=None,
    top_k=1,
    max_answer_length=30,
    windowing=QuestionWindowing(),
    null_threshold=None,
    batch_size=None,
    engine="auto",
    quantize=None,
):
    """Finds the `top_k` best answers to `question` in `context`.

    Several questions run together: the windows of all of them are sorted by length
    and batched as one set, and each question's answers come back in its place.

    Args:
        model: an extractive QA model (`BertQuestionAnswerer`) whose outputs are
            `start_logits` and `end_logits`, each (B, L).
        tokenizer: a `BertTokenizer`; None uses `model.tokenizer`.
        question: the question string; or a list of them; or records, a DataFrame
            or a `datasets.Dataset` with "question" and "context" fields (then
            `context` stays None).
        context: the context string, of any length (windowed); for a list of
            questions, one context for all of them or a list as long as it.
        top_k: number of answers to return, best first.
        max_answer_length: the longest answer, in tokens.
        windowing: how the context is cut into windows, a `QuestionWindowing`
            (window length, stride, longest question); its `max_length` is capped
            at the model's `max_positions`.
        null_threshold: for SQuAD 2.0 models. None always answers. A number
            answers "no answer" (`is_impossible=True`, no answers) when
            `no_answer_score - best span score > null_threshold`.
        batch_size: windows per forward pass (None: `inference_batch_size()`).
        engine, quantize: what runs the forward passes, "auto", "keras" or "onnxruntime",
            and with which weights, None or "int8" (`kbert.inference.inference_engine`).

    Returns:
        An `AnswerResult` for a question string, a list of them otherwise. An empty
        (or whitespace-only) context gives "no answer" without running the model.

    Raises:
        ValueError: for a question that leaves no room for the context in a
            window of `windowing.max_length` tokens, or an empty question.

    Examples:

    >>> result = model.answer("Who sat?", "The cat sat on the mat.")
    >>> best = result.answers[0]
    >>> best.text, best.start, best.end
    ('The cat', 0, 7)
    >>> result.context[best.start:best.end] == best.text
    True
    >>> [r.answers[0].text for r in model.answer(["Who sat?", "Where?"], "The cat sat on the mat.")]
    ['The cat', 'on the mat']
    """
    tokenizer = resolve_tokenizer(model, tokenizer)
    model = engine_model(model, engine, quantize)
    top_k = check_positive_int("top_k", top_k)
    max_answer_length = check_positive_int("max_answer_length", max_answer_length)
    batch_size = inference_batch_size(batch_size)
    _check_null_threshold(null_threshold)
    questions, contexts, single = questions_and_contexts(question, context)
    groups = [
        context_windows(model, tokenizer, one_question, one_context, windowing)
        for one_question, one_context in zip(questions, contexts)
    ]
    logits = grouped_window_logits(model, tokenizer, groups, batch_size)
    results = [
        _answer_from_logits(
            model, tokenizer, one_question, one_context, windows, group_logits,
            top_k, max_answer_length, null_threshold,
        )
        for one_question, one_context, windows, group_logits in zip(
            questions, contexts, groups, logits
        )
    ]
    return results[0] if single else results


def _answer_from_logits(
    model, tokenizer, question, context, windows, logits, top_k, max_answer_length, null_threshold
):
    """One question's `AnswerResult` from its windows' `(start_logits, end_logits)`."""
    if not windows:
        return _result(model, question, context, (), no_answer_score=None)
    start_logits, end_logits = logits
    spans = _SpanBand(windows, start_logits, end_logits, max_answer_length)
    no_answer_score = float(np.min(start_logits[:, 0] + end_logits[:, 0]))
    # Never empty: each context token starts a span in the window where it has
    # the most context.
    best_score = float(spans.scores[spans.valid].max())
    if null_threshold is not None and no_answer_score - best_score > null_threshold:
        return _result(model, question, context, (), no_answer_score)
    answers = _best_answers(tokenizer, windows, context, spans, top_k)
    return _result(model, question, context, answers, no_answer_score)


def _check_null_threshold(null_threshold):
    if null_threshold is not None and (
        isinstance(null_threshold, bool) or not isinstance(null_threshold, numbers.Real)
    ):
        raise ValueError(
            f"`null_threshold` must be None or a number. Received: null_threshold="
            f"{null_threshold!r}"
        )


class _SpanBand:
    """Every candidate span of every window, as (window, start token, length - 1).

    A band of `max_answer_length` spans per start token, not a full L x L matrix.
    A span is valid when it starts at a context token where its window gives the
    most context and ends at a context token of the same window.

    Attributes:
        scores: (W, L, A) `start_logit + end_logit`.
        valid: (W, L, A) bool.
        end_index: (L, A) the last token of each span, clipped to the window.
        offsets: (W, L, 2) character offsets of every window's tokens.
        start_probabilities, end_probabilities: (W, L) softmax over each window's
            real tokens.
        max_answer_length: A.
    """

    def __init__(self, windows, start_logits, end_logits, max_answer_length):
        length = start_logits.shape[1]
        self.offsets = np.zeros((len(windows), length, 2), dtype=np.int64)
        starts_allowed = np.zeros((len(windows), length), dtype=bool)
        ends_allowed = np.zeros((len(windows), length), dtype=bool)
        real = np.zeros((len(windows), length), dtype=bool)
        for index, window in enumerate(windows):
            self.offsets[index, : len(window)] = window.offsets
            starts_allowed[index, : len(window)] = window.max_context
            ends_allowed[index, : len(window)] = window.context_mask
            real[index, : len(window)] = True
        end_index = np.arange(length)[:, None] + np.arange(max_answer_length)[None, :]  # (L, A)
        in_range = end_index < length
        self.end_index = np.minimum(end_index, length - 1)
        self.scores = start_logits[:, :, None] + end_logits[:, self.end_index]  # (W, L, A)
        self.valid = (
            starts_allowed[:, :, None] & ends_allowed[:, self.end_index] & in_range[None]
        )
        self.start_probabilities = softmax(np.where(real, start_logits, -np.inf))
        self.end_probabilities = softmax(np.where(real, end_logits, -np.inf))
        self.max_answer_length = max_answer_length

    def span_probabilities(self):
        """(W, L, A) probabilities over every valid span of every window."""
        valid_scores = np.where(self.valid, self.scores, -np.inf)
        return softmax(valid_scores.reshape(-1)).reshape(self.valid.shape)

    def whole_word_spans(self, tokenizer, windows):
        """`(ranking_scores, wide_start, wide_end)`, each (W, L, A): the spans widened
        to the words their first and last tokens belong to.

        A span whose words run past its window or past `max_answer_length` tokens
        scores -inf. A context whose only spans cut words (one long word, a tiny
        `max_answer_length`) keeps its token spans as they are.
        """
        length = self.scores.shape[1]
        word_start, word_end = _word_edges(tokenizer, windows, length)
        window_rows = np.arange(len(windows))[:, None, None]
        wide_start = np.broadcast_to(word_start[:, :, None], self.valid.shape)
        wide_end = word_end[window_rows, self.end_index[None]]
        whole = (
            self.valid
            & (wide_start >= 0)
            & (wide_end >= 0)
            & (wide_end - wide_start < self.max_answer_length)
        )
        if whole.any():
            return np.where(whole, self.scores, -np.inf), wide_start, wide_end
        wide_start = np.broadcast_to(np.arange(length)[None, :, None], self.valid.shape)
        wide_end = np.broadcast_to(self.end_index[None], self.valid.shape)
        return np.where(self.valid, self.scores, -np.inf), wide_start, wide_end


def _best_answers(tokenizer, windows, context, spans, top_k):
    """The `top_k` best `AnswerSpan`s, each once by its characters, best first."""
    probabilities = spans.span_probabilities()
    ranking_scores, wide_start, wide_end = spans.whole_word_spans(tokenizer, windows)
    answers = []
    for window, start, extra in _ranked_spans(ranking_scores.reshape(-1), spans.valid.shape, top_k):
        first, last = wide_start[window, start, extra], wide_end[window, start, extra]
        start_char = int(spans.offsets[window, first, 0])
        end_char = int(spans.offsets[window, last, 1])
        if any((start_char, end_char) == (known.start, known.end) for known in answers):
            continue
        answers.append(
            AnswerSpan(
                text=context[start_char:end_char],
                start=start_char,
                end=end_char,
                score=float(spans.scores[window, start, extra]),
                probability=float(probabilities[window, start, extra]),
                start_probability=float(spans.start_probabilities[window, start]),
                end_probability=float(spans.end_probabilities[window, start + extra]),
                window=int(window),
            )
        )
        if len(answers) == top_k:
            break
    return tuple(answers)


def _result(model, question, context, answers, no_answer_score):
    """The `AnswerResult`; no answers means "no answer" (`is_impossible`)."""
    return AnswerResult(
        question=question,
        context=context,
        answers=answers,
        no_answer_score=no_answer_score,
        is_impossible=not answers,
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
