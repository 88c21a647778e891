"""Reading UTF-8 text files for the readers, through `kbert.files.bounded_reader`.

Files are regular files (a FIFO or device is refused, never waited on); whole-file reads
are capped (`kbert.files.bounded_reader.SIZE_LIMITS["data"]`), line-by-line reads stream
one line at a time, each at most `MAX_LINE_BYTES` long. Errors name the file and line.
"""

import csv
import io
import json

from kbert.files.bounded_reader import MAX_LINE_BYTES
from kbert.files.bounded_reader import line_stream
from kbert.files.bounded_reader import read_lines
from kbert.files.bounded_reader import read_text

__all__ = ["MAX_LINE_BYTES", "numbered_lines", "read_lines", "read_numbered_lines", "read_text_file"]


def read_text_file(path):
    """The text of a UTF-8 file (a leading byte-order mark is dropped).

    Args:
        path: the file to read.

    Returns:
        the decoded text, line endings untouched.

    Raises:
        ValueError: when the bytes are not UTF-8 (the message names the file and line),
            or the file is not a regular file or larger than the cap for data files.
    """
    return read_text(path, "data", None)


def read_numbered_lines(path):
    """Streams `(line_number, line)` pairs of a UTF-8 file, 1-based, without endings.

    Lines end at "\\n", "\\r\\n" or "\\r", as in `numbered_lines`; only one is held in
    memory at a time.

    Raises:
        ValueError: "path:line: ..." for a line longer than `MAX_LINE_BYTES` or bytes
            that are not UTF-8.
    """
    for number, line, _ in read_lines(path):
        yield number, line


def numbered_lines(text):
    """`(line_number, line)` pairs, 1-based, each line without its ending.

    Lines end at "\\n", "\\r\\n" or "\\r" only (not at other Unicode separators that
    `str.splitlines` would split on, such as U+2028 inside a text).
    """
    for number, line in enumerate(io.StringIO(text, newline=""), start=1):
        yield number, line.rstrip("\r\n")


def json_object_lines(path, lines):
    """`(line, record)` for each JSON object line of `lines` (from `read_numbered_lines`);
    blank lines are skipped, anything but one JSON object per line is refused."""
    for line, content, _ in lines:
        if not content.strip():
            continue
        try:
            record = json.loads(content)
        except json.JSONDecodeError as error:
            raise ValueError(
                f"{path}:{line}: invalid JSON ({error.msg}, column {error.colno}); expected one JSON "
                "object per line (JSON Lines)."
            ) from None
        except (RecursionError, ValueError) as error:
            raise ValueError(f"{path}:{line}: invalid JSON ({type(error).__name__}).") from None
        if not isinstance(record, dict):
            raise ValueError(f"{path}:{line}: expected a JSON object, found {type(record).__name__}.")
        yield line, record


def csv_rows(path, lines, delimiter=","):
    """`(line, row)` for each non-blank record of CSV lines (from `read_lines`).

    `delimiter="\t"` reads GLUE-style TSV, where quotes are ordinary characters.

    Raises:
        ValueError: naming the file and line of a malformed record.
    """
    if delimiter == ",":
        reader = csv.reader(line_stream(lines), strict=True)
    else:
        reader = csv.reader(line_stream(lines), delimiter=delimiter, quoting=csv.QUOTE_NONE)
    previous_line = 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise ValueError(f"{path}:{previous_line + 1}: malformed record ({error}).") from None
        line, previous_line = previous_line + 1, reader.line_num
        if row:
            yield line, row
