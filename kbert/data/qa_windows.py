"""Question-answering windows: a long context cut into overlapping model inputs.

BERT reads at most `max_length` tokens, `[CLS] question [SEP] context [SEP]`. A
longer context is tokenized once and cut into windows that start every
`doc_stride` context tokens (the "document stride" of BERT's `run_squad.py`: the
step between window starts, not the overlap), each paired with the whole
question; a `QuestionWindowing` holds these settings. Every window keeps the
character offsets of its context tokens, so a predicted token span maps back to an
exact substring of the caller's context, and an answer given in characters maps to
token labels for training.

Examples:

>>> windows = make_qa_windows(tokenizer, "Who sat?", long_context, QuestionWindowing())
>>> window = windows[1]
>>> start, end = char_span_to_token_span(window, 1200, 1209)
>>> token_span_to_char_span(window, start, end)   # when the span is in window 1
(1200, 1209)
"""

import logging
import math
from dataclasses import dataclass

import numpy as np

from kbert.argument_checks import check_integer
from kbert.argument_checks import check_text
from kbert.argument_checks import describe_value
from kbert.data.question_windowing import QuestionWindowing

logger = logging.getLogger("kbert.data")

# The tokens of a window besides the question and the context: [CLS], two [SEP].
_SPECIAL_TOKENS_PER_WINDOW = 3


@dataclass(frozen=True, eq=False)
class QAWindow:
    """One model input `[CLS] question [SEP] context part [SEP]` of a QA example.

    A `QAWindow` has a length and `token_ids`/`segment_ids`, so
    `tokenizer.pad(windows, sequence_length=...)` batches windows like encodings.

    Args:
        token_ids: int32 array `(L,)`.
        segment_ids: int32 array `(L,)`: 0 for `[CLS] question [SEP]`, 1 for
            `context part [SEP]`.
        offsets: int32 array `(L, 2)`: `[start, end)` character offsets into the
            caller's context for context tokens, `(0, 0)` for every other token.
        context_mask: bool array `(L,)`, True on the tokens of the context.
        max_context: bool array `(L,)`, True on the context tokens for which this
            window gives the most context on both sides among all windows (BERT's
            `_check_is_max_context`); every context token is True in exactly one
            window. Answer search starts spans only there, so overlapping windows
            do not propose the same span twice.
        window_index: position of this window among the example's windows.
        context_token_start: index, among the tokens of the whole context, of
            this window's first context token.
        context_token_end: index after its last context token.
        num_context_tokens: number of tokens of the whole context.
    """

    token_ids: np.ndarray
    segment_ids: np.ndarray
    offsets: np.ndarray
    context_mask: np.ndarray
    max_context: np.ndarray
    window_index: int
    context_token_start: int
    context_token_end: int
    num_context_tokens: int

    def __len__(self):
        return len(self.token_ids)


def make_qa_windows(tokenizer, question, context, windowing=QuestionWindowing()):
    """Tokenizes a question and its context into overlapping windows.

    The context is tokenized once; windows are slices of its tokens. Each window
    holds as many context tokens as fit (`max_length - 3 - question tokens`), and
    the next window starts `doc_stride` context tokens later (at most one full
    window later, so no token is skipped), until the last window reaches the end
    of the context.

    Args:
        tokenizer: a `BertTokenizer`.
        question: the question string.
        context: the context string; offsets point into it.
        windowing: a `QuestionWindowing` with a `max_length` (`capped(limit)`
            gives one for a windowing whose `max_length` is None).

    Returns:
        A list of `QAWindow`; empty when the context has no tokens (empty or
        whitespace only).

    Raises:
        ValueError: when the question has no tokens, or is so long that a window
            could not hold it and at least one context token.
    """
    check_text("question", question)
    check_text("context", context)
    if not isinstance(windowing, QuestionWindowing) or windowing.max_length is None:
        raise ValueError(
            "`windowing` must be a QuestionWindowing with a `max_length` (see "
            f"`QuestionWindowing.capped`). Received: windowing={windowing!r}"
        )
    max_length, doc_stride = windowing.max_length, windowing.doc_stride
    max_question_length = windowing.max_question_length

    # The context is tokenized whole: the windows cover all of it. The question only as
    # far as a window can hold it (one piece more tells that it is longer).
    question_pieces = _question_pieces(max_length, max_question_length)
    (question_part,) = tokenizer.tokenize_texts([question], max_pieces=question_pieces + 1)
    (context_part,) = tokenizer.tokenize_texts([context])
    question_part = _fit_question(question, question_part, max_length, max_question_length)
    num_tokens = len(context_part)
    if num_tokens == 0:
        return []

    room = max_length - _SPECIAL_TOKENS_PER_WINDOW - len(question_part)
    stride = min(doc_stride, room)
    num_windows = 1 + math.ceil(max(num_tokens - room, 0) / stride)
    starts = np.arange(num_windows) * stride
    ends = np.minimum(starts + room, num_tokens)
    best_window = _max_context_windows(starts, ends, num_tokens)

    windows = []
    for index, (start, end) in enumerate(zip(starts.tolist(), ends.tolist())):
        # Every window fits max_length, so segment packing truncates nothing.
        encoding = tokenizer.pack_segments(
            question_part, context_part[start:end], max_length=max_length
        )
        context_mask = encoding.sequence_ids == 1
        max_context = np.zeros(len(encoding), dtype=bool)
        max_context[context_mask] = best_window[start:end] == index
        windows.append(
            QAWindow(
                token_ids=encoding.token_ids,
                segment_ids=encoding.segment_ids,
                offsets=np.where(context_mask[:, None], encoding.offsets, 0),
                context_mask=context_mask,
                max_context=max_context,
                window_index=index,
                context_token_start=start,
                context_token_end=end,
                num_context_tokens=num_tokens,
            )
        )
    return windows


def char_span_to_token_span(window, start_char, end_char):
    """The tokens of `window` that cover the characters `[start_char, end_char)`.

    This is how a SQuAD answer (character offset and text) becomes training labels.

    Args:
        window: a `QAWindow`.
        start_char: character offset of the span in the context.
        end_char: offset after its last character (`start_char + len(text)`).

    Returns:
        `(start, end)`: indices into the window of the first and the last
        (inclusive) token overlapping the span, or `(0, 0)` (the `[CLS]` token,
        BERT's "no answer here" label) when the span is not entirely inside the
        window. At a window edge, a span that reaches into the gap before the next
        window's first token counts as outside (the neighbouring window holds it).

    Examples:

    >>> char_span_to_token_span(window, 27, 32)
    (14, 15)
    """
    start_char = check_integer("start_char", start_char, 0)
    end_char = check_integer("end_char", end_char, 0)
    if end_char <= start_char:
        raise ValueError(
            "`end_char` must be greater than `start_char`. Received: "
            f"start_char={start_char}, end_char={end_char}"
        )
    indices = np.flatnonzero(window.context_mask)
    offsets = window.offsets[indices]
    overlaps = np.flatnonzero((offsets[:, 1] > start_char) & (offsets[:, 0] < end_char))
    if len(overlaps) == 0:
        return 0, 0
    first, last = int(overlaps[0]), int(overlaps[-1])
    # Tokens outside the window may overlap the span too; then it is not inside.
    if first == 0 and window.context_token_start > 0 and start_char < offsets[0, 0]:
        return 0, 0
    if (
        last == len(indices) - 1
        and window.context_token_end < window.num_context_tokens
        and end_char > offsets[-1, 1]
    ):
        return 0, 0
    return int(indices[first]), int(indices[last])


def token_span_to_char_span(window, start, end):
    """The characters of the context that tokens `start..end` (inclusive) came from.

    Args:
        window: a `QAWindow`.
        start: index of the span's first token in the window.
        end: index of its last token; `start <= end`, both context tokens.

    Returns:
        `(start_char, end_char)`, so that `context[start_char:end_char]` is the
        span's text, exactly as the caller wrote it.

    Examples:

    >>> token_span_to_char_span(window, 14, 15)
    (27, 32)
    """
    start = check_integer("start", start, 0)
    end = check_integer("end", end, 0)
    if not start <= end < len(window):
        raise ValueError(
            f"`start` and `end` must satisfy 0 <= start <= end < {len(window)} (the "
            f"window's length). Received: start={start}, end={end}"
        )
    if not (window.context_mask[start] and window.context_mask[end]):
        raise ValueError(
            "`start` and `end` must both be context tokens of the window "
            f"(indices {_context_range(window)}). Received: start={start}, end={end}"
        )
    return int(window.offsets[start, 0]), int(window.offsets[end, 1])


def _question_pieces(max_length, max_question_length):
    """The most pieces of a question a window keeps (a longer one is cut or refused)."""
    room = max_length - _SPECIAL_TOKENS_PER_WINDOW - 1
    return room if max_question_length is None else min(room, max_question_length)


def _fit_question(question, question_part, max_length, max_question_length):
    """Checks the question's length; truncates it to `max_question_length`."""
    if len(question_part) == 0:
        raise ValueError(
            "`question` must contain at least one token. Received: "
            f"question={describe_value(question)}"
        )
    count = len(question_part)
    # Tokenized one piece past what a window keeps, a long question has at least that many.
    cut = count == _question_pieces(max_length, max_question_length) + 1
    shown = f"at least {count}" if cut else str(count)
    room = max_length - _SPECIAL_TOKENS_PER_WINDOW - 1
    if count > room and (max_question_length is None or max_question_length > room):
        raise ValueError(
            f"The question has {shown} tokens, but max_length={max_length} "
            f"leaves room for at most {room} question tokens besides [CLS], two [SEP] "
            "and one context token. Shorten the question or raise `max_length`. "
            f"Received: question={describe_value(question)}"
        )
    if max_question_length is not None and count > max_question_length:
        logger.warning(
            "The question has %s tokens; it is truncated to max_question_length=%d: %s",
            shown,
            max_question_length,
            describe_value(question),
        )
        question_part = question_part[:max_question_length]
    return question_part


def _max_context_windows(starts, ends, num_tokens):
    """For each context token, the window where it has the most context.

    As BERT's `_check_is_max_context`: the score of a token in a window is the
    smaller of its left and right context, plus 0.01 * the window length; the
    first window wins ties. Window by window, so memory stays linear in the context
    (a (windows, tokens) table of a long context would take gigabytes).
    """
    best_window = np.zeros(num_tokens, dtype=np.int64)  # (T,)
    best_score = np.full(num_tokens, -np.inf)  # (T,)
    for index, (start, end) in enumerate(zip(starts.tolist(), ends.tolist())):
        positions = np.arange(start, end)
        scores = np.minimum(positions - start, end - 1 - positions) + 0.01 * (end - start)
        better = scores > best_score[start:end]  # strictly: the first window wins ties
        best_score[start:end][better] = scores[better]
        best_window[start:end][better] = index
    return best_window


def _context_range(window):
    indices = np.flatnonzero(window.context_mask)
    return f"{int(indices[0])}..{int(indices[-1])}"
