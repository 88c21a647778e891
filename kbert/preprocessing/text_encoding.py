"""Strings in, encodings out: the checks and the truncation warning every caller shares."""

import logging

from kbert.argument_checks import describe_kind
from kbert.argument_checks import text_problem
from kbert.preprocessing.data_forms import table_columns
from kbert.preprocessing.data_forms import table_kind
from kbert.preprocessing.record_fields import RecordFields

logger = logging.getLogger("kbert.preprocessing")

# What the inference functions read from records, DataFrames and datasets.
TEXT_FIELDS = RecordFields(inputs=("text", "pair"), optional=("pair",))
QUESTION_FIELDS = RecordFields(inputs=("question", "context"))


def as_text_list(text_or_texts, name):
    """Returns `(texts, single)`: a list of strings, and whether one string came in.

    Records, a DataFrame or a `datasets.Dataset` give their "text" field.
    """
    if table_kind(text_or_texts) is not None:
        return _checked(table_columns(text_or_texts, TEXT_FIELDS)["text"], name), False
    if isinstance(text_or_texts, str):
        return [text_or_texts], True
    if isinstance(text_or_texts, bytes) or not hasattr(text_or_texts, "__iter__"):
        raise ValueError(
            f"`{name}` must be a string or a list of strings. Received: "
            f"{name}={describe_kind(text_or_texts)}"
        )
    return _checked(list(text_or_texts), name), False


def texts_and_pairs(text_or_texts, pairs, name):
    """`(texts, pairs, single)` of `as_text_list` and `as_pair_list`; a table without
    `pairs` gives its "pair" field, when it has one."""
    texts, single = as_text_list(text_or_texts, name)
    if pairs is None and table_kind(text_or_texts) is not None:
        pairs = table_columns(text_or_texts, TEXT_FIELDS).get("pair")
    return texts, as_pair_list(pairs, texts, single, name), single


def questions_and_contexts(question, context):
    """`(questions, contexts, single)` for `answer`: lists of the same length, and
    whether one question string came in.

    Args:
        question: a string, a list of strings, or records, a DataFrame or a
            `datasets.Dataset` with "question" and "context" fields.
        context: a string (for every question), a list as long as the questions, or
            None for a table (which holds the contexts).
    """
    if table_kind(question) is not None:
        if context is not None:
            raise ValueError(
                "Pass the contexts inside the table (a 'context' field) or as `context` "
                "beside a list of questions, not both."
            )
        columns = table_columns(question, QUESTION_FIELDS)
        return (
            _checked(columns["question"], "question"),
            _checked(columns["context"], "context"),
            False,
        )
    questions, single = as_text_list(question, "question")
    if context is None:
        raise ValueError(
            "`context` must be a string (for every question) or a list of strings, one per "
            "question. Received: context=None"
        )
    if isinstance(context, str):
        return questions, [context] * len(questions), single
    contexts, _ = as_text_list(context, "context")
    if single or len(contexts) != len(questions):
        raise ValueError(
            f"`context` must be one string, or a list as long as the questions. Received: "
            f"{len(questions) if not single else 'one'} question(s) and {len(contexts)} "
            f"context(s)."
        )
    return questions, contexts, single


def _checked(texts, name):
    for index, text in enumerate(texts):
        problem = text_problem(text)
        if problem is not None:
            raise ValueError(
                f"`{name}` must be a string or a list of strings. Received: {name}[{index}]: "
                f"{problem}."
            )
    return texts


def as_pair_list(pairs, texts, single, texts_name):
    """The second texts of pairs, as a list matching `texts` (None stays None).

    Args:
        pairs: None, a string (for a single text) or a list of strings.
        texts: the first texts, as `as_text_list` returned them.
        single: whether one string came in as the first text.
        texts_name: the caller's name of the first texts, for the message.
    """
    if pairs is None:
        return None
    pairs, single_pair = as_text_list(pairs, "pairs")
    if single_pair != single or len(pairs) != len(texts):
        raise ValueError(
            f"`pairs` must match `{texts_name}`: a string for a string, a list of the same "
            f"length for a list. Received: {len(texts)} text(s) and {len(pairs)} pair(s)"
        )
    return pairs


def encode_texts(tokenizer, texts, pairs, max_length):
    """`tokenizer.encode_batch`, logging a warning for each truncated text."""
    encodings = tokenizer.encode_batch(texts, pairs, max_length=max_length)
    for index, encoding in enumerate(encodings):
        if encoding.truncated:
            logger.warning(
                "Text %d is longer than the model's limit of %d tokens and was truncated: %r",
                index,
                max_length,
                _preview(texts[index]),
            )
    return encodings


def _preview(text, limit=60):
    return text if len(text) <= limit else text[: limit - 3] + "..."
