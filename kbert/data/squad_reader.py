"""Reading SQuAD v1.1 and v2.0 JSON files into question-answering examples.

The format: `{"data": [{"title", "paragraphs": [{"context", "qas": [{"id", "question",
"answers": [{"text", "answer_start"}], "is_impossible"}]}]}]}`; `is_impossible` (v2.0 only)
marks questions without an answer, whose `answers` list is empty.
"""

import logging

from kbert.argument_checks import describe_value
from kbert.argument_checks import text_problem
from kbert.data.examples import GoldAnswer, QAExample
from kbert.data.problem_collector import ProblemCollector
from kbert.data.read_error import ReadError
from kbert.files.bounded_reader import read_json

__all__ = ["read_squad"]

logger = logging.getLogger(__name__)


def _field(path, where, record, key, kinds, default=None):
    """`record[key]`, checked to be one of `kinds`; `default` when absent (if not None)."""
    if not isinstance(record, dict):
        raise ReadError.at(path, None, f"{where}: expected a JSON object, found {type(record).__name__}.")
    if key not in record:
        if default is not None:
            return default
        raise ReadError.at(path, None, f"{where}: no {key!r} field; the fields are {list(record)}.")
    value = record[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join(kind.__name__ for kind in kinds)
        raise ReadError.at(path, None, f"{where}: {key!r} must be {names}. Received {describe_value(value)}.")
    problem = text_problem(value) if isinstance(value, str) else None
    if problem is not None:
        raise ReadError.at(path, None, f"{where}: {key!r}: {problem}.")
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
            raise ReadError.at(path, None, f"{answer_where}: 'text' is empty.")
        if not 0 <= start <= len(context):
            # A negative start would index from the end and could match by accident.
            raise ReadError.at(
                path,
                None,
                f"{answer_where}: 'answer_start' must be an offset in the context "
                f"(0 to {len(context)}). Received: answer_start={start}",
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
                raise ReadError.at(path, None, f"{answer_where}: answer {text!r} {reason}.")
            start, moved = nearest, moved + 1
        answers.append(GoldAnswer(text, start))
    return tuple(answers), moved


def read_squad(path, fix_answer_starts=True, errors="raise"):
    """Reads a SQuAD v1.1 or v2.0 JSON file, unanswerable questions included.

    Every answer is checked to be the substring of its context at its `answer_start`. Some
    released files have starts that are off by a few characters; with `fix_answer_starts`
    such an answer is moved to the occurrence of its text nearest the given start, and the
    number of moved answers is logged as a warning.

    Args:
        path: the JSON file.
        fix_answer_starts: whether to repair starts that do not point at the answer text.
            When False, such an answer is an error.
        errors: "raise" to stop at the first problem, or "collect" to read the whole file
            and return every problem with the questions that have none.

    Returns:
        with `errors="raise"`, a list of `QAExample(id, title, question, context, answers,
        is_impossible)` in file order, `answers` a tuple of `GoldAnswer(text, start)`; with
        "collect", a `ReadResult(examples, problems)`: the questions without problems and a
        `ReadProblem(file, None, message)` for each bad question (or paragraph, or article,
        whose questions are then left out), the message naming its JSON path. A file that
        is not JSON, or has no "data" list, is then the only problem, with no examples.

    Raises:
        ValueError: for invalid JSON (file, line and column), a missing or mistyped field
            (file and JSON path, with the question id when known), an `answer_start` outside
            the context, a repeated question id, an answer not found in its context, or a
            question that has no answers but is not marked `is_impossible` (or one marked so
            that has answers); for a file that is not a regular file, larger than 256 MB or
            nested too deeply (`kbert.files.bounded_reader`); with "collect", only for an
            invalid `errors`.

    Examples:
    >>> examples = read_squad("dev-v2.0.json")
    >>> example = examples[0]
    >>> all(example.context[answer.start:answer.end] == answer.text for answer in example.answers)
    True
    >>> read_squad("bad.json", errors="collect").problems[0].message
    "bad.json: question 'q7' at data[0].paragraphs[2].qas[1]: 'text' is empty."
    """
    collector = ProblemCollector(path, errors)

    def read_examples():
        document = read_json(path, "data", None)
        articles = _field(path, "the top level", document, "data", (list,))
        reading = _Reading(path, fix_answer_starts, collector)
        for article_index, article in enumerate(articles):
            try:
                reading.article(f"data[{article_index}]", article)
            except ReadError as error:
                collector.add(error)
        if reading.moved:
            logger.warning("%s: moved %d answer starts to where the answer text occurs.", path, reading.moved)
        logger.info("Read %d questions from %s.", len(reading.examples), path)
        return reading.examples

    return collector.read(read_examples)


class _Reading:
    """The questions of one SQuAD document, read article by article."""

    def __init__(self, path, fix_answer_starts, collector):
        self.path, self.fix_answer_starts, self.collector = path, fix_answer_starts, collector
        self.examples, self.seen_ids, self.moved = [], set(), 0

    def article(self, where, article):
        title = _field(self.path, where, article, "title", (str,), default="")
        for index, paragraph in enumerate(_field(self.path, where, article, "paragraphs", (list,))):
            try:
                self.paragraph(f"{where}.paragraphs[{index}]", paragraph, title)
            except ReadError as error:
                self.collector.add(error)

    def paragraph(self, where, paragraph, title):
        context = _field(self.path, where, paragraph, "context", (str,))
        for index, qa in enumerate(_field(self.path, where, paragraph, "qas", (list,))):
            try:
                self.question(f"{where}.qas[{index}]", qa, title, context)
            except ReadError as error:
                self.collector.add(error)

    def question(self, where, qa, title, context):
        path = self.path
        question_id = str(_field(path, where, qa, "id", (str, int)))
        where = f"question {question_id!r} at {where}"
        if question_id in self.seen_ids:
            raise ReadError.at(path, None, f"{where}: the id {question_id!r} was used before.")
        self.seen_ids.add(question_id)
        question = _field(path, where, qa, "question", (str,))
        is_impossible = _field(path, where, qa, "is_impossible", (bool,), default=False)
        answers, moved = _answers(
            path, where, context, _field(path, where, qa, "answers", (list,)), self.fix_answer_starts
        )
        if bool(answers) == is_impossible:
            problem = (
                "is marked is_impossible but has answers"
                if is_impossible
                else "has no answers and is not marked is_impossible"
            )
            raise ReadError.at(path, None, f"{where}: the question {problem}.")
        self.moved += moved
        self.examples.append(QAExample(question_id, title, question, context, answers, is_impossible))
