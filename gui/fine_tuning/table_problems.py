"""Every problem kbert's reader finds in a table file, not only the first.

Worker side: standard library and kbert's light readers only (no Keras).
"""

import csv
import io
import pathlib
import re
import tempfile

# Problems listed at most; a file with more has more to fix than a list can help with.
MAX_PROBLEMS = 10


def table_problems(path, file_format, columns):
    """Reads a classification table; returns `(examples, problems)`.

    `kbert.data.read_classification` stops at the first bad record. To list them all,
    the file is read again from a private copy in which each rejected record is
    blanked out (blank lines are skipped, and line numbers stay those of the file),
    until the reader accepts the rest, the problem is not a record's (a missing
    column, say) or `MAX_PROBLEMS` are found.

    Args:
        path: the table file.
        file_format: "csv", "tsv" or "jsonl".
        columns: `read_classification`'s `text_column`, `pair_column`, `label_column`.

    Returns:
        `examples`: the `ClassificationExample`s, or None when there were problems;
        `problems`: `(line or None, message)` pairs, in the order of the file.
    """
    from kbert.data import read_classification
    from kbert.data.text_file import read_text_file

    problems = []
    with tempfile.TemporaryDirectory(prefix="kbert-preview-") as folder:
        copy = pathlib.Path(folder) / pathlib.Path(path).name
        source, lines, record_starts = str(path), None, None
        while True:
            try:
                examples = read_classification(source, format=file_format, **columns)
            except ValueError as problem:
                message = str(problem)
                if source != str(path) and message.startswith(source):
                    message = str(path) + message[len(source) :]  # the copy's name: the file's
                line = error_line(path, message)
                problems.append((line, message))
                if lines is None:
                    lines = read_text_file(path).splitlines(keepends=True)
                    record_starts = _record_starts(lines, file_format)
                known = [known_line for known_line, _ in problems[:-1]]
                by_name = isinstance(columns.get("text_column"), str)
                header = record_starts[0] if by_name and file_format != "jsonl" else None
                if line is None or line in known or line == header or len(problems) >= MAX_PROBLEMS:
                    return None, sorted(problems, key=_in_file_order)
                _blank_record(lines, line, record_starts)
                copy.write_text("".join(lines), encoding="utf-8")
                source = str(copy)
                continue
            return (None if problems else examples), sorted(problems, key=_in_file_order)


def error_line(path, message):
    """The line number a kbert reader's message names for `path` ("path:12: ..."), or None."""
    match = re.match(re.escape(str(path)) + r":(\d+)(?::\d+)?:", message)
    return int(match.group(1)) if match else None


def _in_file_order(problem):
    line, _ = problem
    return (line is None, line or 0)


def _record_starts(lines, file_format):
    """The 1-based line where each record (the header first, for CSV/TSV) starts."""
    if file_format == "jsonl":
        return [number for number, line in enumerate(lines, start=1) if line.strip()]
    text = "".join(lines)
    if file_format == "csv":
        reader = csv.reader(io.StringIO(text, newline=""))
    else:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE)
    starts, previous = [], 0
    while True:
        try:
            row = next(reader)
        except (StopIteration, csv.Error):
            return starts or [1]
        if row:
            starts.append(previous + 1)
        previous = reader.line_num


def _blank_record(lines, line, record_starts):
    """Empties the lines of the record that starts on `line` (up to the next record)."""
    later = [start for start in record_starts if start > line]
    end = later[0] if later else len(lines) + 1
    for number in range(line, end):
        ending = lines[number - 1][len(lines[number - 1].rstrip("\r\n")) :]
        lines[number - 1] = ending
