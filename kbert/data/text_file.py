"""Reading a UTF-8 text file for the readers, with decoding errors located by line."""

import io
import pathlib

__all__ = ["read_text_file", "numbered_lines"]


def read_text_file(path):
    """The text of a UTF-8 file (a leading byte-order mark is dropped).

    Args:
        path: the file to read.

    Returns:
        the decoded text, line endings untouched.

    Raises:
        ValueError: when the bytes are not UTF-8; the message names the file and line.
    """
    data = pathlib.Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ValueError(f"{path}:{line}: the file is not valid UTF-8 ({error.reason}).") from None


def numbered_lines(text):
    """`(line_number, line)` pairs, 1-based, each line without its ending.

    Lines end at "\\n", "\\r\\n" or "\\r" only (not at other Unicode separators that
    `str.splitlines` would split on, such as U+2028 inside a text).
    """
    for number, line in enumerate(io.StringIO(text, newline=""), start=1):
        yield number, line.rstrip("\r\n")
