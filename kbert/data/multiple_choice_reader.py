"""Reading multiple-choice examples (SWAG): a context, its candidate endings, the right one.

Two formats. SWAG's CSV (`sent1`, `sent2`, `ending0` ... `ending3`, `label`, and other
columns such as `video-id` or `gold-source`, which are ignored): as transformers'
`run_swag` builds them, the context is `sent1` and each ending is `sent2` followed by
`ending<i>`. JSON Lines: one object per line with `context`, `endings` (a list of
strings) and `label` (the index of the right ending).

Every error is a `ValueError` whose message starts with `file:line` and names the
column or field. Files are streamed line by line
(`kbert.data.text_file.read_located_lines`).
"""

import logging
import re

from kbert.data.examples import MultipleChoiceExample
from kbert.data.problem_collector import ProblemCollector
from kbert.data.read_error import ReadError
from kbert.data.text_file import checked_text
from kbert.data.text_file import csv_rows
from kbert.data.text_file import json_object_lines
from kbert.data.text_file import read_located_lines
from kbert.data.text_file import table_format

__all__ = ["read_multiple_choice"]

logger = logging.getLogger(__name__)

_ENDING_COLUMN = re.compile(r"ending(\d+)")
MIN_ENDINGS = 2


def _label(path, line, field, value, count):
    """The label as an ending index in [0, count)."""
    if isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ReadError.at(
            path,
            line,
            f"{field} must be the index of the right ending (an integer). Received: {value!r:.80}",
        )
    if not 0 <= value < count:
        raise ReadError.at(
            path,
            line,
            f"{field} {value} is out of range: the example has {count} endings, so the label is "
            f"in [0, {count - 1}].",
        )
    return value


def _ending_columns(path, line, header):
    """The `ending<i>` columns of a SWAG header, in order; checked to be 0, 1, 2, ..."""
    found = sorted(
        (int(match.group(1)), name)
        for name in header
        if (match := _ENDING_COLUMN.fullmatch(name))
    )
    if [index for index, _ in found] != list(range(len(found))) or len(found) < MIN_ENDINGS:
        raise ReadError.at(
            path,
            line,
            f"the header must have the columns ending0, ending1, ... (at least {MIN_ENDINGS}). "
            f"Received: {header}",
            record=False,
        )
    return [name for _, name in found]


def _csv_records(path, lines, columns, collector):
    """`(line, context, endings, label value)` for each SWAG CSV row; blank lines skipped."""
    context_column, start_column, label_column = columns
    header = positions = endings = None
    for line, row in csv_rows(path, lines, collector):
        if header is None:
            header, endings = row, _ending_columns(path, line, row)
            wanted = [name for name in (*columns, *endings) if name is not None]
            for name in wanted:
                if name not in header:
                    detail = f"column {name!r} is missing; the columns are {header}."
                    raise ReadError.at(path, line, detail, record=False)
            positions = {name: header.index(name) for name in wanted}
            continue
        try:
            if len(row) != len(header):
                raise ReadError.at(
                    path,
                    line,
                    f"the row has {len(row)} fields but the header has {len(header)}; every row "
                    f"needs all {len(endings)} endings ({', '.join(endings)}).",
                )
            values = {name: row[position] for name, position in positions.items()}
            context = checked_text(
                path, line, f"context in column {context_column!r}", values[context_column]
            )
            start = "" if start_column is None else values[start_column].strip()
            texts = [
                checked_text(path, line, f"ending in column {name!r}", values[name]).strip()
                for name in endings
            ]
        except ReadError as error:
            collector.add(error)
            continue
        label = None if label_column is None else (values[label_column], f"label in column {label_column!r}")
        yield line, context, [f"{start} {text}" if start else text for text in texts], label


def _json_lines_records(path, lines, label_field, collector):
    """`(line, context, endings, label value)` for each JSON object line."""
    for line, record in json_object_lines(path, lines, collector):
        try:
            context, texts = _json_texts(path, line, record, label_field)
        except ReadError as error:
            collector.add(error)
            continue
        label = None if label_field is None else (record[label_field], f"label in field {label_field!r}")
        yield line, context, texts, label


def _json_texts(path, line, record, label_field):
    """The checked context and endings of one JSON Lines record."""
    for key in ("context", "endings") + ((label_field,) if label_field else ()):
        if key not in record:
            raise ReadError.at(path, line, f"field {key!r} is missing; the record has {list(record)}.")
    endings = record["endings"]
    if not isinstance(endings, list):
        raise ReadError.at(path, line, "field 'endings' must be a list of strings.")
    context = checked_text(path, line, "context in field 'context'", record["context"])
    texts = [
        checked_text(path, line, f"ending {index} in field 'endings'", value)
        for index, value in enumerate(endings)
    ]
    return context, texts


def read_multiple_choice(
    path, format=None, context_column="sent1", start_column="sent2", label_column="label", errors="raise"
):
    """Reads multiple-choice examples from SWAG's CSV or from JSON Lines.

    Args:
        path: the file.
        format: "csv" or "jsonl" ("json" is taken as JSON Lines); by default from the
            file extension (.csv, .jsonl, .json, .ndjson).
        context_column: the CSV column of the context (SWAG's `sent1`).
        start_column: the CSV column of the start every ending continues (SWAG's
            `sent2`), or None when the `ending<i>` columns are whole endings.
        label_column: the CSV column (or JSON field) of the label, the index of the
            right ending; None for unlabelled files (prediction).
        errors: "raise" to stop at the first problem, or "collect" to read the whole file
            and return every problem with the examples that have none.

    Returns:
        with `errors="raise"`, a list of `MultipleChoiceExample(context, endings, label,
        line)` in file order, every example with as many endings as the first; with
        "collect", a `ReadResult(examples, problems)`: the good examples and each bad
        record's `ReadProblem(file, line, message)`. A problem that is not a record's (a
        missing column, bytes that are not UTF-8, no records) is then the only problem,
        with no examples.

    Raises:
        ValueError: naming the file and line (and column or field), for a missing
            column, an empty context or ending, a label that is not an ending's index,
            a row with fewer endings than the others, invalid JSON, or no records; with
            "collect", only for invalid arguments (`errors`, `format`).

    Example:

    >>> examples = read_multiple_choice("swag/train.csv")
    >>> examples[0].endings[examples[0].label]
    'The sailors rush to the boat.'
    >>> [problem.line for problem in read_multiple_choice("swag/bad.csv", errors="collect").problems]
    [3, 8]
    """
    collector = ProblemCollector(path, errors)
    file_format = table_format(path, format, ("csv", "jsonl"))

    def read_examples():
        lines = read_located_lines(path)
        if file_format == "jsonl":
            records = _json_lines_records(path, lines, label_column, collector)
        else:
            records = _csv_records(path, lines, (context_column, start_column, label_column), collector)
        examples = []
        for line, context, endings, label in records:
            try:
                examples.append(_example(path, line, context, endings, label, examples))
            except ReadError as error:
                collector.add(error)
        if not examples and not collector.count:
            raise ValueError(f"{path}: no records found.")
        logger.info("Read %d multiple-choice examples from %s.", len(examples), path)
        return examples

    return collector.read(read_examples)


def _example(path, line, context, endings, label, examples):
    """The record as a `MultipleChoiceExample`, checked against the `examples` before it."""
    expected = len(examples[0].endings) if examples else max(len(endings), MIN_ENDINGS)
    if len(endings) != expected:
        first = f", as line {examples[0].line} has" if examples else ""
        raise ReadError.at(path, line, f"the example has {len(endings)} endings; it needs {expected}{first}.")
    if label is not None:
        label = _label(path, line, label[1], label[0], len(endings))
    return MultipleChoiceExample(context, tuple(endings), label, line)
