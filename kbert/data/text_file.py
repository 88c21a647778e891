"""Reading UTF-8 text files for the readers, through `kbert.files.bounded_reader`.

Files are regular files (a FIFO or device is refused, never waited on); whole-file reads
are capped (`kbert.files.bounded_reader.SIZE_LIMITS["data"]`), line-by-line reads stream
one line at a time, each at most `MAX_LINE_BYTES` long. Errors name the file and line:
`kbert.data.read_error.ReadError`s, which also carry the line as a number.
"""

import csv
import io
import json
import pathlib

from kbert.argument_checks import describe_value
from kbert.argument_checks import text_problem
from kbert.data.read_error import ReadError
from kbert.data.read_problem import ReadProblem
from kbert.files.bounded_reader import MAX_LINE_BYTES
from kbert.files.bounded_reader import line_stream
from kbert.files.bounded_reader import read_bytes
from kbert.files.bounded_reader import read_lines

__all__ = [
    "MAX_LINE_BYTES",
    "checked_text",
    "numbered_lines",
    "read_lines",
    "read_located_lines",
    "read_numbered_lines",
    "read_text_file",
    "table_format",
]

# Each name of a table format, and the format it means; a file's extension is one of them.
_TABLE_FORMAT_NAMES = {"csv": "csv", "tsv": "tsv", "jsonl": "jsonl", "json": "jsonl", "ndjson": "jsonl"}


def table_format(path, format, formats):
    """The format of a table file: `format` ("json" and "ndjson" are "jsonl"), or when
    it is None the one that `path`'s extension names.

    Args:
        path: the file.
        format: a format name, or None.
        formats: the formats the reader takes, e.g. `("csv", "jsonl")`.

    Raises:
        ValueError: for a name, or an extension, of no format in `formats`.
    """
    names = {name: meant for name, meant in _TABLE_FORMAT_NAMES.items() if meant in formats}
    if format is not None:
        if str(format).lower() not in names:
            raise ValueError(f"`format` must be one of {sorted(names)}. Received: format={format!r}")
        return names[str(format).lower()]
    by_suffix = {f".{name}": meant for name, meant in names.items()}
    suffix = pathlib.Path(path).suffix.lower()
    if suffix not in by_suffix:
        quoted = [f"'{name}'" for name in formats]
        choices = " or ".join(filter(None, (", ".join(quoted[:-1]), quoted[-1])))
        raise ValueError(
            f"{path}: cannot tell the format from the extension {suffix!r}; use one of "
            f"{sorted(by_suffix)} or pass format={choices}."
        )
    return by_suffix[suffix]


def checked_text(path, line, what, value, expected="a string"):
    """`value` when it is a string of text that is not blank; else a `ReadError` at
    `path:line` that names `what` ("context in column 'sent1'") and says it must be
    `expected`."""
    if not isinstance(value, str):
        raise ReadError.at(
            path, line, f"{what} must be {expected}. Received: {describe_value(value)}"
        )
    problem = text_problem(value)
    if problem is not None:
        raise ReadError.at(path, line, f"{what}: {problem}.")
    if not value.strip():
        raise ReadError.at(path, line, f"empty {what}.")
    return value


def read_text_file(path):
    """The text of a UTF-8 file (a leading byte-order mark is dropped).

    Args:
        path: the file to read.

    Returns:
        the decoded text, line endings untouched.

    Raises:
        ValueError: when the bytes are not UTF-8 (a `ReadError` naming the file and line),
            or the file is not a regular file or larger than the cap for data files.
    """
    data = read_bytes(path, "data", None)
    # Decoded here, not by `read_text`, so that the error carries its line as a number.
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        detail = f"the file is not valid UTF-8 ({error.reason})."
        raise ReadError.at(path, line, detail, record=False) from None


def read_numbered_lines(path):
    """Streams `(line_number, line)` pairs of a UTF-8 file, 1-based, without endings.

    Lines end at "\\n", "\\r\\n" or "\\r", as in `numbered_lines`; only one is held in
    memory at a time.

    Raises:
        ValueError: "path:line: ..." for a line longer than `MAX_LINE_BYTES` or bytes
            that are not UTF-8 (a `ReadError` naming that line).
    """
    for number, line, _ in read_located_lines(path):
        yield number, line


def read_located_lines(path):
    """`read_lines(path)`, whose errors about a line are `ReadError`s naming that line.

    A line too long or not UTF-8 is the file's problem, not one record's
    (`ReadError.record` is False): the readers stop there even when collecting problems.
    """
    number = 0
    try:
        for number, line, ending in read_lines(path):
            yield number, line, ending
    except ValueError as error:
        # `read_lines` stops at the line after the last it gave, naming it "path:line: ...";
        # other errors (the file missing or refused) have no line and pass unchanged.
        if isinstance(error, ReadError) or not str(error).startswith(f"{path}:{number + 1}: "):
            raise
        raise ReadError(ReadProblem(str(path), number + 1, str(error)), record=False) from None


def numbered_lines(text):
    """`(line_number, line)` pairs, 1-based, each line without its ending.

    Lines end at "\\n", "\\r\\n" or "\\r" only (not at other Unicode separators that
    `str.splitlines` would split on, such as U+2028 inside a text).
    """
    for number, line in enumerate(io.StringIO(text, newline=""), start=1):
        yield number, line.rstrip("\r\n")


def json_object_lines(path, lines, collector):
    """`(line, record)` for each JSON object line of `lines` (from `read_located_lines`);
    blank lines are skipped, anything but one JSON object per line is a problem of that
    line for `collector` (a `ProblemCollector`)."""
    for line, content, _ in lines:
        if not content.strip():
            continue
        try:
            record = _json_object(path, line, content)
        except ReadError as error:
            collector.add(error)
            continue
        yield line, record


def _json_object(path, line, content):
    try:
        record = json.loads(content)
    except json.JSONDecodeError as error:
        raise ReadError.at(
            path,
            line,
            f"invalid JSON ({error.msg}, column {error.colno}); expected one JSON object per line "
            "(JSON Lines).",
        ) from None
    except (RecursionError, ValueError) as error:
        raise ReadError.at(path, line, f"invalid JSON ({type(error).__name__}).") from None
    if not isinstance(record, dict):
        raise ReadError.at(path, line, f"expected a JSON object, found {type(record).__name__}.")
    return record


def csv_rows(path, lines, collector, delimiter=","):
    """`(line, row)` for each non-blank record of CSV lines (from `read_located_lines`).

    `delimiter="\t"` reads GLUE-style TSV, where quotes are ordinary characters. A
    malformed record is a problem of its first line for `collector` (a
    `ProblemCollector`); before the first row (the header, say) it ends the reading.
    """
    if delimiter == ",":
        reader = csv.reader(line_stream(lines), strict=True)
    else:
        reader = csv.reader(line_stream(lines), delimiter=delimiter, quoting=csv.QUOTE_NONE)
    previous_line, first = 0, True
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            detail = f"malformed record ({error})."
            collector.add(ReadError.at(path, previous_line + 1, detail, record=not first))
            previous_line = reader.line_num
            continue
        line, previous_line = previous_line + 1, reader.line_num
        if row:
            first = False
            yield line, row
