"""Copying a folder kbert wrote, reading every file through the bounded reader.

`shutil.copytree` follows links: a `vocab.txt` linked to a secret, or a folder linked to
another place, would be copied into the destination. `copy_folder_checked` walks the
source without following any link, refuses anything that is not a regular file or a
folder, and reads each file with `open_checked` (its real path inside `root`, opened by
an `openat` walk), so nothing outside `root` is ever read.
"""

import os
import pathlib
import shutil
import stat

from kbert.files.atomic_write import open_for_writing
from kbert.files.bounded_reader import open_checked
from kbert.files.file_refused_error import FileRefusedError

# The most files and bytes one copy takes: a BERT-large preset is a few files and 1.3 GB.
MAX_FILES = 1000
MAX_BYTES = 64 * 2**30
_CHUNK_BYTES = 2**20


def copy_folder_checked(source, destination, root):
    """Copies the folder `source` into the existing folder `destination`.

    Args:
        source: the folder to copy; it must lie inside `root` by its real path, and so
            must every file in it.
        destination: an existing (empty) folder.
        root: the folder nothing may be read outside of.

    Raises:
        FileRefusedError: for a link, a special file, a path outside `root`, or more than
            `MAX_FILES` files or `MAX_BYTES` bytes; nothing is read from it.
    """
    source, destination = pathlib.Path(source), pathlib.Path(destination)
    real_root = os.path.realpath(root)
    _check_folder(source, real_root)
    counts = {"files": 0, "bytes": 0}
    _copy_entries(source, destination, real_root, counts)


def _check_folder(folder, real_root):
    status = os.lstat(folder)
    if stat.S_ISLNK(status.st_mode):
        raise FileRefusedError(folder, f"it is a link to {os.path.realpath(folder)!r}")
    if not stat.S_ISDIR(status.st_mode):
        raise FileRefusedError(folder, "it is not a folder")
    real = os.path.realpath(folder)
    if os.path.commonpath([real_root, real]) != real_root:
        raise FileRefusedError(folder, f"it lies outside {real_root!r}")


def _copy_entries(source, destination, real_root, counts):
    with os.scandir(source) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    for entry in entries:
        path, target = pathlib.Path(entry.path), destination / entry.name
        if entry.is_dir(follow_symlinks=False):
            _check_folder(path, real_root)
            os.mkdir(target)
            _copy_entries(path, target, real_root, counts)
            continue
        if entry.is_symlink():
            raise FileRefusedError(path, f"it is a link to {os.path.realpath(path)!r}")
        counts["files"] += 1
        if counts["files"] > MAX_FILES:
            raise FileRefusedError(source, f"it holds more than {MAX_FILES} files")
        with open_checked(path, None, real_root) as reader, open_for_writing(target) as writer:
            status = os.fstat(reader.fileno())
            if status.st_nlink != 1:
                raise FileRefusedError(path, "it has other names (hard links to another file)")
            counts["bytes"] += status.st_size
            if counts["bytes"] > MAX_BYTES:
                raise FileRefusedError(source, f"it holds more than {MAX_BYTES} bytes")
            shutil.copyfileobj(reader, writer, _CHUNK_BYTES)
