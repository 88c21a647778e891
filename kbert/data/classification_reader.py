"""Reading labelled (or unlabelled) texts and text pairs from CSV, TSV or JSON Lines.

Every error is a `ValueError` whose message starts with `file:line` and names the column.
Files are streamed line by line (`kbert.data.text_file.read_located_lines`): a line longer
than `MAX_LINE_BYTES` is an error naming its file and line, read no further than the cap.
"""

import logging
import re

from kbert.data.examples import ClassificationExample
from kbert.data.problem_collector import ProblemCollector
from kbert.data.read_error import ReadError
from kbert.data.text_file import checked_text
from kbert.data.text_file import csv_rows
from kbert.data.text_file import json_object_lines
from kbert.data.text_file import read_located_lines
from kbert.data.text_file import table_format

__all__ = ["classification_label_names", "read_classification"]

logger = logging.getLogger(__name__)

_INTEGER = re.compile(r"[+-]?\d+")


def _requested_columns(text_column, pair_column, label_column):
    """`{field: column}` for the fields asked for; columns are all names or all positions."""
    requested = {"text": text_column, "pair": pair_column, "label": label_column}
    requested = {field: column for field, column in requested.items() if column is not None}
    if "text" not in requested:
        raise ValueError("`text_column` is required. Received: text_column=None")
    positions = [isinstance(column, int) and not isinstance(column, bool) for column in requested.values()]
    if all(positions):
        return requested, False
    if all(isinstance(column, str) for column in requested.values()):
        return requested, True
    received = ", ".join(f"{field}_column={column!r}" for field, column in requested.items())
    raise ValueError(
        "Columns must all be names (str, the file has a header row) or all positions (int, "
        f"no header row). Received: {received}"
    )


def _delimited_records(path, lines, delimiter, columns, has_header, collector):
    """`(line, {field: value})` for each row of CSV/TSV lines; blank lines are skipped."""
    width = header_line = None
    positions = columns if not has_header else None
    for line, row in csv_rows(path, lines, collector, delimiter):
        if width is None:
            width, header_line = len(row), line
            if has_header:
                positions = _column_positions(path, line, row, columns)
                continue
            too_far = {field: column for field, column in columns.items() if not -width <= column < width}
            if too_far:
                field, column = next(iter(too_far.items()))
                raise ReadError.at(
                    path,
                    line,
                    f"{field}_column={column} is out of range; the rows have {width} fields.",
                    record=False,
                )
        if len(row) != width:
            header = "the header on line" if has_header else "line"
            detail = f"the row has {len(row)} fields but {header} {header_line} has {width}."
            collector.add(ReadError.at(path, line, detail))
            continue
        yield line, {field: row[position] for field, position in positions.items()}


def _column_positions(path, line, header, columns):
    """`{field: index}` of each requested column name in the header row."""
    positions = {}
    for field, name in columns.items():
        if header.count(name) != 1:
            problem = "is not a column" if name not in header else "names several columns"
            detail = f"{field}_column={name!r} {problem}; the columns are {header}."
            raise ReadError.at(path, line, detail, record=False)
        positions[field] = header.index(name)
    return positions


def _json_lines_records(path, lines, columns, collector):
    """`(line, {field: value})` for each JSON object line; blank lines are skipped."""
    for line, record in json_object_lines(path, lines, collector):
        missing = [(field, key) for field, key in columns.items() if key not in record]
        if missing:
            field, key = missing[0]
            detail = f"{field}_column={key!r} is not a field; the record has {list(record)}."
            collector.add(ReadError.at(path, line, detail))
            continue
        yield line, {field: record[key] for field, key in columns.items()}


def _checked_value(path, line, field, column, value):
    """A record's value as a non-empty string; JSON integer labels become their decimal text."""
    if field == "label" and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    expected = "a string or an integer" if field == "label" else "a string"
    return checked_text(path, line, f"{field} in column {column!r}", value, expected)


def read_classification(
    path, text_column="text", pair_column=None, label_column="label", format=None, errors="raise"
):
    """Reads texts or text pairs, with or without labels, for sequence classification.

    CSV files are read with standard quoting (a quoted field may span lines; errors give the
    line where the record starts); TSV files without quoting, as GLUE's; JSON Lines files hold
    one object per line. A UTF-8 byte-order mark is ignored. Blank lines are skipped.

    Args:
        path: the file.
        text_column: the column (CSV/TSV header name or JSON key) holding the text. All
            columns may instead be 0-based int positions, for CSV/TSV files without a header row.
        pair_column: the column holding the second text of a pair, or None for single texts.
        label_column: the column holding the label, or None for unlabelled files (prediction).
            Labels may be strings or, in JSON, integers; they are stored as strings, and
            `classification_label_names` orders integer labels numerically.
        format: "csv", "tsv" or "jsonl" ("json" is taken as JSON Lines); by default from the
            file extension (.csv, .tsv, .jsonl, .json, .ndjson).
        errors: "raise" to stop at the first problem, or "collect" to read the whole file
            and return every problem with the examples that have none.

    Returns:
        with `errors="raise"`, a list of `ClassificationExample(text, pair, label, line)` in
        file order; with "collect", a `ReadResult(examples, problems)`: the good examples
        and each bad record's `ReadProblem(file, line, message)`. A problem that is not a
        record's (the file missing or not UTF-8, a missing column, no records) is then the
        only problem, with no examples.

    Raises:
        ValueError: naming the file and line, for a missing column (with the columns that
            exist), an empty or non-string value, invalid JSON, a row whose field count
            differs from the header's, or a file without records; with "collect", only for
            invalid arguments (`errors`, `format`, the columns).

    Examples:
    >>> examples = read_classification("train.tsv", text_column="sentence")
    >>> examples[0]
    ClassificationExample(text='a gripping film', pair=None, label='1', line=2)
    >>> result = read_classification("train.tsv", text_column="sentence", errors="collect")
    >>> [(problem.line, problem.message) for problem in result.problems]
    [(7, "train.tsv:7: empty label in column 'label'.")]
    """
    collector = ProblemCollector(path, errors)
    file_format = table_format(path, format, ("csv", "tsv", "jsonl"))
    columns, has_header = _requested_columns(text_column, pair_column, label_column)
    if file_format == "jsonl" and not has_header:
        raise ValueError(f"{path}: JSON Lines records are read by key; give column names, not positions.")

    def read_examples():
        lines = read_located_lines(path)
        if file_format == "jsonl":
            records = _json_lines_records(path, lines, columns, collector)
        else:
            delimiter = "," if file_format == "csv" else "\t"
            records = _delimited_records(path, lines, delimiter, columns, has_header, collector)
        examples = []
        for line, values in records:
            try:
                checked = {
                    field: _checked_value(path, line, field, columns[field], value)
                    for field, value in values.items()
                }
            except ReadError as error:
                collector.add(error)
                continue
            examples.append(
                ClassificationExample(checked["text"], checked.get("pair"), checked.get("label"), line)
            )
        if not examples and not collector.count:
            raise ValueError(f"{path}: no records found.")
        logger.info("Read %d examples from %s.", len(examples), path)
        return examples

    return collector.read(read_examples)


def classification_label_names(examples):
    """The distinct labels of `examples`, sorted: numerically when all are integers.

    Args:
        examples: `ClassificationExample`s; unlabelled ones are ignored.

    Returns:
        list of label strings, e.g. `["2", "10"]` (not `["10", "2"]`) or `["neg", "pos"]`.

    Examples:
    >>> classification_label_names([ClassificationExample("a", None, "10", 1),
    ...                             ClassificationExample("b", None, "2", 2)])
    ['2', '10']
    """
    labels = {example.label for example in examples if example.label is not None}
    if all(_INTEGER.fullmatch(label) for label in labels):
        return sorted(labels, key=lambda label: (int(label), label))
    return sorted(labels)
