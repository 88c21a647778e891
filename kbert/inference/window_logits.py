"""A QA context's windows and the model's start and end logits on them (`window_logits`).

What `answer` and `span_probabilities` share, so that both read a context the same
way: the windows of one `QuestionWindowing`, capped at the model's limit, all run as
padded batches of one length.
"""

import logging

import numpy as np

from kbert.data.qa_windows import make_qa_windows
from kbert.data.question_windowing import QuestionWindowing
from kbert.inference.model_io import predict_in_batches
from kbert.inference.model_io import sequence_limit

logger = logging.getLogger("kbert.inference")


def context_windows(model, tokenizer, question, context, windowing):
    """The windows of `context` for `question`, at most as long as `model` takes.

    Args:
        model: the QA model (for its limit).
        tokenizer: its `BertTokenizer`.
        question: the question string.
        context: the context string.
        windowing: a `QuestionWindowing`; its `max_length` is capped at the limit.

    Returns:
        A list of `QAWindow` (empty for a context without tokens).
    """
    if not isinstance(windowing, QuestionWindowing):
        raise ValueError(
            f"`windowing` must be a QuestionWindowing. Received: windowing={windowing!r}"
        )
    limit = sequence_limit(model, tokenizer)
    capped = windowing.capped(limit)
    if capped.max_length != windowing.max_length:
        logger.debug("max_length=%s capped at the model's limit of %d", windowing.max_length, limit)
    return make_qa_windows(tokenizer, question, context, capped)


def window_logits(model, tokenizer, windows, batch_size):
    """Start and end logits `(W, L)` of every window, L the windows' bucket length."""
    starts, ends = [None] * len(windows), [None] * len(windows)
    batches = predict_in_batches(model, tokenizer, windows, batch_size, same_length=True)
    for rows, outputs in batches:
        for index, row in enumerate(rows):
            starts[row] = outputs["start_logits"][index]
            ends[row] = outputs["end_logits"][index]
    return np.stack(starts).astype(np.float32), np.stack(ends).astype(np.float32)


def grouped_window_logits(model, tokenizer, groups, batch_size):
    """`window_logits` of several questions' windows, run as one length-sorted set.

    Args:
        groups: one list of `QAWindow` per question (possibly empty).

    Returns:
        One `(start_logits, end_logits)` per group, each `(W, L)` with L the longest
        bucket among the group's windows (shorter rows padded with zeros, which
        the span search never reads: it stops at each window's own length); None
        for an empty group.
    """
    windows = [window for group in groups for window in group]
    if not windows:
        return [None] * len(groups)
    starts, ends = [None] * len(windows), [None] * len(windows)
    for rows, outputs in predict_in_batches(model, tokenizer, windows, batch_size):
        for index, row in enumerate(rows):
            starts[row] = np.asarray(outputs["start_logits"][index], dtype=np.float32)
            ends[row] = np.asarray(outputs["end_logits"][index], dtype=np.float32)
    logits, first = [], 0
    for group in groups:
        rows = range(first, first + len(group))
        first += len(group)
        if not group:
            logits.append(None)
            continue
        longest = max(len(starts[row]) for row in rows)
        logits.append(tuple(
            np.stack([np.pad(values[row], (0, longest - len(values[row]))) for row in rows])
            for values in (starts, ends)
        ))
    return logits
