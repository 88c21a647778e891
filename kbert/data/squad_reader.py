"""Reading SQuAD v1.1 and v2.0 JSON files into question-answering examples.

The format: `{"data": [{"title", "paragraphs": [{"context", "qas": [{"id", "question",
"answers": [{"text", "answer_start"}], "is_impossible"}]}]}]}`; `is_impossible` (v2.0 only)
marks questions without an answer, whose `answers` list is empty.
"""

import logging

from kbert.argument_checks import describe_value
from kbert.argument_checks import text_problem
from kbert.data.examples import GoldAnswer, QAExample
from kbert.files.bounded_reader import read_json

__all__ = ["read_squad"]

logger = logging.getLogger(__name__)


def _field(path, where, record, key, kinds, default=None):
    """`record[key]`, checked to be one of `kinds`; `default` when absent (if not None)."""
    if not isinstance(record, dict):
        raise ValueError(f"{path}: {where}: expected a JSON object, found {type(record).__name__}.")
    if key not in record:
        if default is not None:
            return default
        raise ValueError(f"{path}: {where}: no {key!r} field; the fields are {list(record)}.")
    value = record[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join(kind.__name__ for kind in kinds)
        raise ValueError(
            f"{path}: {where}: {key!r} must be {names}. Received {describe_value(value)}."
        )
    problem = text_problem(value) if isinstance(value, str) else None
    if problem is not None:
        raise ValueError(f"{path}: {where}: {key!r}: {problem}.")
    return value


def _nearest_occurrence(context, text, start):
    """Start of the occurrence of `text` in `context` closest to `start`, or None."""
    best = None
    found = context.find(text)
    while found != -1:
        if best is None or abs(found - start) < abs(best - start):
            best = found
        if found > start:
            break
        found = context.find(text, found + 1)
    return best


def _answers(path, where, context, records, fix_answer_starts):
    """The checked answers of one question and how many starts were moved."""
    answers, moved = [], 0
    for index, record in enumerate(records):
        answer_where = f"{where}, answers[{index}]"
        text = _field(path, answer_where, record, "text", (str,))
        start = _field(path, answer_where, record, "answer_start", (int,))
        if not text:
            raise ValueError(f"{path}: {answer_where}: 'text' is empty.")
        if not 0 <= start <= len(context):
            # A negative start would index from the end and could match by accident.
            raise ValueError(
                f"{path}: {answer_where}: 'answer_start' must be an offset in the context "
                f"(0 to {len(context)}). Received: answer_start={start}"
            )
        if context[start : start + len(text)] != text:
            nearest = _nearest_occurrence(context, text, start) if fix_answer_starts else None
            if nearest is None:
                reason = (
                    "does not occur in the context"
                    if fix_answer_starts
                    else (
                        f"is not at answer_start={start}; the context has "
                        f"{context[start : start + len(text)]!r} there "
                        "(pass fix_answer_starts=True to search for it)"
                    )
                )
                raise ValueError(f"{path}: {answer_where}: answer {text!r} {reason}.")
            start, moved = nearest, moved + 1
        answers.append(GoldAnswer(text, start))
    return tuple(answers), moved


def read_squad(path, fix_answer_starts=True):
    """Reads a SQuAD v1.1 or v2.0 JSON file, unanswerable questions included.

    Every answer is checked to be the substring of its context at its `answer_start`. Some
    released files have starts that are off by a few characters; with `fix_answer_starts`
    such an answer is moved to the occurrence of its text nearest the given start, and the
    number of moved answers is logged as a warning.

    Args:
        path: the JSON file.
        fix_answer_starts: whether to repair starts that do not point at the answer text.
            When False, such an answer is an error.

    Returns:
        list of `QAExample(id, title, question, context, answers, is_impossible)` in file
        order; `answers` is a tuple of `GoldAnswer(text, start)`.

    Raises:
        ValueError: for invalid JSON (file, line and column), a missing or mistyped field
            (file and JSON path, with the question id when known), an `answer_start` outside
            the context, a repeated question id, an answer not found in its context, or a
            question that has no answers but is not marked `is_impossible` (or one marked so
            that has answers); for a file that is not a regular file, larger than 256 MB or
            nested too deeply (`kbert.files.bounded_reader`).

    Examples:
    >>> examples = read_squad("dev-v2.0.json")
    >>> example = examples[0]
    >>> all(example.context[answer.start:answer.end] == answer.text for answer in example.answers)
    True
    """
    document = read_json(path, "data", None)
    examples, seen_ids, moved_total = [], set(), 0
    for article_index, article in enumerate(_field(path, "the top level", document, "data", (list,))):
        article_where = f"data[{article_index}]"
        title = _field(path, article_where, article, "title", (str,), default="")
        for paragraph_index, paragraph in enumerate(
            _field(path, article_where, article, "paragraphs", (list,))
        ):
            paragraph_where = f"{article_where}.paragraphs[{paragraph_index}]"
            context = _field(path, paragraph_where, paragraph, "context", (str,))
            for question_index, qa in enumerate(_field(path, paragraph_where, paragraph, "qas", (list,))):
                where = f"{paragraph_where}.qas[{question_index}]"
                question_id = str(_field(path, where, qa, "id", (str, int)))
                where = f"question {question_id!r} at {where}"
                if question_id in seen_ids:
                    raise ValueError(f"{path}: {where}: the id {question_id!r} was used before.")
                seen_ids.add(question_id)
                question = _field(path, where, qa, "question", (str,))
                is_impossible = _field(path, where, qa, "is_impossible", (bool,), default=False)
                answers, moved = _answers(
                    path, where, context, _field(path, where, qa, "answers", (list,)), fix_answer_starts
                )
                if bool(answers) == is_impossible:
                    problem = (
                        "is marked is_impossible but has answers"
                        if is_impossible
                        else ("has no answers and is not marked is_impossible")
                    )
                    raise ValueError(f"{path}: {where}: the question {problem}.")
                moved_total += moved
                examples.append(QAExample(question_id, title, question, context, answers, is_impossible))
    if moved_total:
        logger.warning("%s: moved %d answer starts to where the answer text occurs.", path, moved_total)
    logger.info("Read %d questions from %s.", len(examples), path)
    return examples
