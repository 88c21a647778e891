"""The one way kbert reads a file from a model or data folder: checked before it is read.

Every file goes through `open_checked` first:

- it must be a regular file: a FIFO would block forever, a device (`/dev/zero`) never
  ends, and neither is opened;
- its real path, every folder on the way resolved, must lie inside the real path of the
  folder holding the file (or of the `folder` the caller names, such as a model's root
  folder): a `vocab.txt` linked to `/etc/shadow`, or an `assets/tokenizer` folder linked
  elsewhere, is refused, naming the link and its target;
- it is then opened by an `openat` walk from that folder, no link followed, so a folder
  swapped for a link after the check cannot lead outside; hard links are not visible
  from a path and are not refused;
- whole-file reads are capped by the file's kind (`SIZE_LIMITS`), checked on the opened
  file before a byte is read;
- JSON is parsed only when nested at most `MAX_JSON_DEPTH` deep (checked on the raw
  bytes, so a 10 MB run of `[` costs no recursion);
- files read line by line (training data) are streamed, each line at most
  `MAX_LINE_BYTES` long.

Errors are `ValueError`s naming the file: `FileRefusedError` for a file refused as a
file, plain `ValueError` with `file:line` for bad content.
"""

import errno
import json
import os
import pathlib
import re
import stat

import numpy as np

from kbert.files.file_refused_error import FileRefusedError

MIB = 2**20
# Kind of file -> the most bytes a whole-file read accepts. Real files are far smaller:
# BERT-base's config.json is 570 bytes, its vocab.txt 230 KB, its tokenizer.json 700 KB,
# a multilingual tokenizer.json 2.9 MB, the safetensors header of BERT-large 40 KB,
# SQuAD 2.0's training set 40 MB.
SIZE_LIMITS = {
    # config.json, tokenizer_config.json, metadata.json, *.index.json, task.json, manifests
    "config": 10 * MIB,
    "vocabulary": 16 * MIB,
    "tokenizer": 32 * MIB,
    "header": 16 * MIB,
    # A whole data file read at once: SQuAD JSON, inference inputs.
    "data": 256 * MIB,
}
MAX_JSON_DEPTH = 64
# The longest line of a file read line by line (CSV/TSV/JSON Lines/CoNLL/corpora).
MAX_LINE_BYTES = 4 * MIB

_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NON_BLOCKING = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# Where os.open takes `dir_fd` (POSIX), files are reached by an openat walk.
_FOLDER_FLAGS = os.O_RDONLY | _DIRECTORY | _NO_FOLLOW | _CLOEXEC
_WALKS_BY_DESCRIPTOR = os.open in os.supports_dir_fd and bool(_NO_FOLLOW and _DIRECTORY)
_FILE_TYPES = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_BRACKETS = re.compile(rb"[\[\]{}]")


def checked_path(path, folder=None):
    """The real path of `path`, which must be a regular file inside `folder`.

    Args:
        path: the file.
        folder: the folder it must stay in when symbolic links are resolved; by default
            the folder that holds `path`.

    Raises:
        ValueError: "File not found" when nothing is at `path`.
        FileRefusedError: when it resolves outside `folder` or is not a regular file.
    """
    path = pathlib.Path(path)
    folder = path.parent if folder is None else pathlib.Path(folder)
    if not os.path.lexists(path):
        raise ValueError(f"File not found: {str(path)!r}")
    try:
        real = pathlib.Path(os.path.realpath(path))
        root = os.path.realpath(folder)
    except OSError as error:
        # A link on the way vanished while it was being resolved.
        raise ValueError(f"Cannot read {str(path)!r}: {error.strerror}") from None
    if os.path.commonpath([root, str(real)]) != root:
        raise FileRefusedError(
            path, f"it is a link to {str(real)!r}, outside the folder {str(folder)!r}"
        )
    try:
        status = os.stat(real)
    except OSError as error:
        raise ValueError(f"Cannot read {str(path)!r}: {error.strerror}") from None
    _check_regular(path, status)
    return real


def _check_regular(path, status):
    if stat.S_ISREG(status.st_mode):
        return
    kind = next((name for test, name in _FILE_TYPES if test(status.st_mode)), "not a regular file")
    raise FileRefusedError(path, f"it is {kind}, not a regular file")


def open_checked(path, kind=None, folder=None):
    """Opens `path` for binary reading after `checked_path`'s checks, its folder chain pinned.

    The file is reached from the real path of `folder` one component at a time, each
    folder opened relative to the one before without following links (an `openat`
    walk): a folder on the way swapped for a link between the check and the open makes
    the open fail instead of leaving the folder.

    Args:
        path: the file.
        kind: a key of `SIZE_LIMITS` whose cap the file's size must respect, or None
            (for files streamed in bounded pieces).
        folder: as in `checked_path`.

    Returns:
        A binary file object; close it (use `with`).
    """
    folder = pathlib.Path(path).parent if folder is None else pathlib.Path(folder)
    real = checked_path(path, folder)
    descriptor = _open_pinned(path, real, os.path.realpath(folder))
    try:
        status = os.fstat(descriptor)
        _check_regular(path, status)
        if kind is not None:
            limit = SIZE_LIMITS[kind]
            if status.st_size > limit:
                raise FileRefusedError(
                    path,
                    f"it has {status.st_size} bytes, more than the {limit} a {kind} file "
                    "may have",
                )
        if _NON_BLOCKING:
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def _open_pinned(path, real, root):
    """A descriptor of `real` (inside the folder `root`), reached without following links.

    Non-blocking as well: a file swapped for a FIFO since it was checked does not hang.
    """
    file_flags = os.O_RDONLY | _NO_FOLLOW | _NON_BLOCKING | _BINARY | _CLOEXEC
    parts = pathlib.PurePath(os.path.relpath(real, root)).parts
    if os.pardir in parts:
        # The folder itself moved between the check and here.
        raise FileRefusedError(path, "its folder was replaced while it was opened")
    if not _WALKS_BY_DESCRIPTOR:
        return _open_compared(path, real, file_flags)
    try:
        directory = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError as error:
        raise ValueError(f"Cannot read {str(path)!r}: {error.strerror}") from None
    try:
        for part in parts[:-1]:
            inner = os.open(part, _FOLDER_FLAGS, dir_fd=directory)
            os.close(directory)
            directory = inner
        return os.open(parts[-1], file_flags, dir_fd=directory)
    except OSError as error:
        raise _changed_while_opened(path, error) from None
    finally:
        os.close(directory)


def _open_compared(path, real, flags):
    """Without `dir_fd` (Windows): opens `real`, then checks it is still what was resolved."""
    try:
        descriptor = os.open(real, flags)
    except OSError as error:
        raise _changed_while_opened(path, error) from None
    status, expected = os.fstat(descriptor), os.stat(real)
    if (status.st_dev, status.st_ino) != (expected.st_dev, expected.st_ino):
        os.close(descriptor)
        raise FileRefusedError(path, "it was replaced while it was opened")
    return descriptor


def _changed_while_opened(path, error):
    if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return FileRefusedError(
            path, "it or a folder on its path was replaced by a link while it was opened"
        )
    return ValueError(f"Cannot read {str(path)!r}: {error.strerror}")


def read_bytes(path, kind, folder=None):
    """The bytes of `path`, at most `SIZE_LIMITS[kind]` of them (else refused unread)."""
    with open_checked(path, kind, folder) as file:
        # Read one byte past the cap: a file that grew since fstat is still bounded.
        data = file.read(SIZE_LIMITS[kind] + 1)
    if len(data) > SIZE_LIMITS[kind]:
        raise FileRefusedError(path, f"it grew beyond {SIZE_LIMITS[kind]} bytes while read")
    return data


def decode_utf8(data, source):
    """`data` decoded as UTF-8 (a leading byte-order mark dropped); errors name the line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ValueError(
            f"{source}:{line}: the file is not valid UTF-8 ({error.reason})."
        ) from None


def read_text(path, kind, folder=None):
    """The UTF-8 text of `path` (capped as `read_bytes`); decoding errors name the line."""
    return decode_utf8(read_bytes(path, kind, folder), path)


def read_json(path, kind="config", folder=None):
    """The parsed JSON file `path`, capped by `kind` and nested at most `MAX_JSON_DEPTH` deep.

    Raises:
        ValueError: "path:line:column: invalid JSON (...)" for a syntax error, and the
            errors of `open_checked`.
    """
    return parse_json(read_bytes(path, kind, folder), path)


def parse_json(data, source, max_depth=MAX_JSON_DEPTH):
    """Parses the JSON bytes `data` from `source` (named in errors), depth-limited."""
    depth = json_nesting_depth(data)
    if depth > max_depth:
        raise FileRefusedError(
            source, f"its JSON is nested {depth} levels deep, more than the {max_depth} allowed"
        )
    text = decode_utf8(data, source)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{source}:{error.lineno}:{error.colno}: invalid JSON ({error.msg})."
        ) from None
    except (RecursionError, ValueError) as error:
        # A number too long to convert, or nesting hidden from the prescan.
        raise ValueError(f"{source}: invalid JSON ({type(error).__name__}: {error}).") from None


def json_nesting_depth(data):
    """How deeply the arrays and objects of the JSON bytes `data` nest (0 for a scalar).

    Brackets inside strings are not counted. Vectorised over the brackets, so a
    hostile file full of them is measured in milliseconds.
    """
    outside_strings = _JSON_STRING.sub(b'""', bytes(data))
    brackets = np.frombuffer(b"".join(_JSON_BRACKETS.findall(outside_strings)), dtype=np.uint8)
    if brackets.size == 0:
        return 0
    steps = np.where((brackets == ord("[")) | (brackets == ord("{")), 1, -1).astype(np.int64)
    return int(np.cumsum(steps).max(initial=0))


def read_lines(path, folder=None, max_line_bytes=MAX_LINE_BYTES):
    """Streams the lines of the UTF-8 file `path`: `(number, line, ending)`, numbered from 1.

    Lines end at "\\n", "\\r\\n" or "\\r" (`ending` is that string, "" on the last line
    without one); a leading byte-order mark is dropped. Only one line is in memory at a
    time.

    Raises:
        ValueError: "path:line: ..." for a line longer than `max_line_bytes` (read no
            further than the cap) or not valid UTF-8.
    """
    number = 0
    with open_checked(path, None, folder) as file:
        while True:
            raw = file.readline(max_line_bytes + 1)
            if not raw:
                return
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                raise ValueError(
                    f"{path}:{number + 1}: the line is longer than {max_line_bytes} bytes, "
                    "the most kbert reads in one line."
                )
            for piece, ending in _split_line(raw):
                number += 1
                try:
                    text = piece.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as error:
                    raise ValueError(
                        f"{path}:{number}: the file is not valid UTF-8 ({error.reason})."
                    ) from None
                yield number, text, ending


def _split_line(raw):
    """`(content, ending)` pieces of one "\\n"-terminated chunk, split at lone "\\r"s too."""
    if raw.endswith(b"\r\n"):
        body, last_ending = raw[:-2], "\r\n"
    elif raw.endswith(b"\n"):
        body, last_ending = raw[:-1], "\n"
    elif raw.endswith(b"\r"):
        body, last_ending = raw[:-1], "\r"
    else:
        body, last_ending = raw, ""
    pieces = body.split(b"\r")
    for piece in pieces[:-1]:
        yield piece, "\r"
    yield pieces[-1], last_ending


def line_stream(lines):
    """The lines of `read_lines` with their endings, as a text stream (for `csv.reader`)."""
    return (line + ending for _, line, ending in lines)


__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_LINE_BYTES",
    "SIZE_LIMITS",
    "checked_path",
    "decode_utf8",
    "json_nesting_depth",
    "line_stream",
    "open_checked",
    "parse_json",
    "read_bytes",
    "read_json",
    "read_lines",
    "read_text",
]
