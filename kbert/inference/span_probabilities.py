"""Where a QA model thinks answers start and end: a probability for every context token.

`answer` ranks whole spans; this shows the two distributions the spans are made of,
for views that shade a passage token by token. The context is windowed exactly as
`answer` windows it (same helpers, same `QuestionWindowing`), and each token keeps the
character offsets of the caller's string.
"""

from dataclasses import dataclass

import numpy as np

from kbert.data.question_windowing import QuestionWindowing
from kbert.inference.window_logits import context_windows
from kbert.inference.window_logits import window_logits
from kbert.inference.model_io import inference_batch_size
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import softmax


@dataclass(frozen=True)
class SpanProbabilities:
    """Start and end probabilities of every token of a QA context.

    Args:
        question: the caller's question.
        context: the caller's context.
        spans: tuple of `(start, end)` character offsets, one per context token, in
            text order: `context[start:end]` is the token's text.
        start_probabilities: tuple of floats, one per token: the softmax of a
            window's start logits over its tokens (as `AnswerSpan.start_probability`),
            the largest over the windows that hold the token.
        end_probabilities: the same for the end logits.
        num_windows: how many windows the context was cut into (0 for a context
            without tokens).
    """

    question: str
    context: str
    spans: tuple
    start_probabilities: tuple
    end_probabilities: tuple
    num_windows: int


def span_probabilities(
    model,
    tokenizer,
    question,
    context,
    windowing=QuestionWindowing(),
    batch_size=None,
):
    """The start and end probability of every context token, over all windows.

    A token in several (overlapping) windows gets the largest of its probabilities
    there, so a long context reads like one: with a single window, the values at an
    answer's first and last token are its `start_probability` and `end_probability`.

    Args:
        model: an extractive QA model (`BertQuestionAnswerer`) with outputs
            `start_logits` and `end_logits`, each (B, L).
        tokenizer: a `BertTokenizer`; None uses `model.tokenizer`.
        question: the question string.
        context: the context string, of any length (windowed).
        windowing: how the context is cut into windows, a `QuestionWindowing`,
            as `answer` takes it; its `max_length` is capped at the model's
            `max_positions`.
        batch_size: windows per forward pass (None: `inference_batch_size()`).

    Returns:
        A `SpanProbabilities`; empty (no spans, no windows) for a context without
        tokens, without running the model.

    Raises:
        ValueError: as `answer` does, for an empty question or one that leaves no
            room for the context.

    Examples:

    >>> shading = span_probabilities(model, None, "Who sat?", "The cat sat.")
    >>> [(shading.context[start:end], round(p, 2))
    ...  for (start, end), p in zip(shading.spans, shading.start_probabilities)]
    [('The', 0.31), ('cat', 0.42), ('sat', 0.05), ('.', 0.01)]
    """
    tokenizer = resolve_tokenizer(model, tokenizer)
    batch_size = inference_batch_size(batch_size)
    windows = context_windows(model, tokenizer, question, context, windowing)
    if not windows:
        return SpanProbabilities(question, context, (), (), (), 0)
    start_logits, end_logits = window_logits(model, tokenizer, windows, batch_size)

    num_tokens = windows[0].num_context_tokens
    offsets = np.zeros((num_tokens, 2), dtype=np.int64)
    starts = np.zeros(num_tokens, dtype=np.float32)
    ends = np.zeros(num_tokens, dtype=np.float32)
    for index, window in enumerate(windows):
        length = len(window)
        # Over the window's real tokens, as `answer` computes an answer's probabilities.
        window_starts = softmax(start_logits[index, :length])[window.context_mask]
        window_ends = softmax(end_logits[index, :length])[window.context_mask]
        tokens = slice(window.context_token_start, window.context_token_end)
        offsets[tokens] = window.offsets[window.context_mask]
        starts[tokens] = np.maximum(starts[tokens], window_starts)
        ends[tokens] = np.maximum(ends[tokens], window_ends)
    return SpanProbabilities(
        question=question,
        context=context,
        spans=tuple((int(start), int(end)) for start, end in offsets),
        start_probabilities=tuple(float(value) for value in starts),
        end_probabilities=tuple(float(value) for value in ends),
        num_windows=len(windows),
    )
