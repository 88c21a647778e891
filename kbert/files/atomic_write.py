"""Writing a file so that a crash or a full disk leaves the old version or the new one.

`atomic_path` yields a temporary name beside the target, `.NAME.tmp-PID-XXXXXXXX`; the
caller writes it (with any library: h5py, safetensors, plain `open`), and on success it
is flushed to disk and renamed over the target. On failure it is deleted and the target
is untouched. PID is the writing process, so a temporary left by a killed writer is
known to be abandoned and is deleted by the next write of the same target
(`remove_stale_temporaries`).

A write that would not fit is refused before it starts (`check_free_space`), and a full
disk during the write becomes one `OSError` (errno ENOSPC) naming the file, raised
after the temporary is removed: no half-written file, no cascade of library errors.
"""

import contextlib
import errno
import json
import os
import pathlib
import re
import secrets
import shutil

from kbert.files.process_liveness import process_is_running
from kbert.files.sibling_names import sibling_stem

TEMPORARY_INFIX = ".tmp-"
# Room kept free beyond a write's own size (file-system metadata, HDF5 headers).
FREE_SPACE_MARGIN_BYTES = 2**20
_DISK_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
_OWNER = re.compile(r"(\d+)(?:-|$)")
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_OWN_MESSAGES = ("No space left on the device while writing", "Not enough free space to write")


def temporary_prefix(path):
    """The name prefix of the temporaries of writes to `path`, any process."""
    return f".{sibling_stem(pathlib.Path(path).name)}{TEMPORARY_INFIX}"


def check_free_space(folder, needed_bytes, target):
    """Raises `OSError(ENOSPC)` unless `folder`'s file system has `needed_bytes` free.

    Args:
        folder: an existing folder on the file system to write to.
        needed_bytes: about how much the write takes.
        target: what is written, for the message.
    """
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return  # Unknown (some network file systems): the write itself will tell.
    if free < needed_bytes + FREE_SPACE_MARGIN_BYTES:
        raise OSError(
            errno.ENOSPC,
            f"{_OWN_MESSAGES[1]} {str(target)!r}: it needs about "
            f"{readable_size(needed_bytes + FREE_SPACE_MARGIN_BYTES)} (the file and "
            f"{readable_size(FREE_SPACE_MARGIN_BYTES)} of room for the file system) and only "
            f"{readable_size(free)} are free",
        )


def readable_size(count):
    """`count` bytes as people read them: '527 bytes', '4.0 KiB', '1.5 GiB'."""
    if count < 1024:
        return f"{count} bytes"
    for unit in ("KiB", "MiB", "GiB"):
        count /= 1024
        if count < 1024 or unit == "GiB":
            return f"{count:.1f} {unit}"


def raise_if_disk_full(error, target):
    """Raises one plain `OSError(ENOSPC)` naming `target` when `error` is a full disk.

    Libraries report a full disk their own way (h5py a cascade of HDF5 errors,
    safetensors a `SafetensorError`); callers call this in their `except` block, after
    cleaning up, and re-raise `error` when it returns.
    """
    if not isinstance(error, Exception):
        return
    if isinstance(error, OSError) and str(error.strerror).startswith(_OWN_MESSAGES):
        return  # Already one plain error, naming the innermost file.
    number = getattr(error, "errno", None)
    if number in _DISK_FULL or "No space left" in str(error):
        raise OSError(
            errno.ENOSPC, f"{_OWN_MESSAGES[0]} {str(target)!r}"
        ) from None


@contextlib.contextmanager
def atomic_path(path, expected_bytes=None):
    """Yields a temporary path that replaces `path` when the block succeeds.

    Args:
        path: the file to (re)write; its folder must exist.
        expected_bytes: about how large the file will be; when given, the free space is
            checked first.

    Raises:
        OSError: errno ENOSPC when the disk is (or would get) full; `path` is unchanged
            and no temporary is left.

    Example:

    >>> with atomic_path("model.weights.h5", expected_bytes=nbytes) as temporary:
    ...     write_weights(temporary, weights)
    """
    path = pathlib.Path(path)
    remove_stale_temporaries(path)
    if expected_bytes is not None:
        check_free_space(path.parent, expected_bytes, path)
    temporary = _create_temporary(path)
    try:
        yield temporary
        _refuse_link(temporary, path)
        _give_umask_mode(temporary)
        fsync_file(temporary)
        os.replace(temporary, path)
        fsync_directory(path.parent)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise_if_disk_full(error, path)
        raise


def _create_temporary(path):
    """A new empty file beside `path`, created by this call (`O_EXCL`, no link followed).

    The writer then opens an existing regular file of its own, never whatever a link
    planted under a guessed name points to.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_FOLLOW | _CLOEXEC
    while True:
        temporary = path.with_name(
            f"{temporary_prefix(path)}{os.getpid()}-{secrets.token_hex(4)}"
        )
        try:
            os.close(os.open(temporary, flags, 0o644))
        except FileExistsError:
            continue
        return temporary


def _refuse_link(temporary, path):
    """Raises unless `temporary` is still a plain file (not replaced by a link meanwhile)."""
    if os.path.islink(temporary) or not os.path.isfile(temporary):
        from kbert.files.file_refused_error import FileRefusedError

        raise FileRefusedError(
            path, f"its temporary {temporary.name!r} was replaced while written", "write"
        )


def umask_file_mode():
    """The mode a new file gets from `open`: 0o666 less the process's umask (0o644 for 022)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    # Elsewhere the umask can only be read by setting it; put back at once.
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _give_umask_mode(temporary):
    """Gives `temporary` the umask's mode: a writing library may have replaced it with a
    file of its own, owner-only (safetensors writes through a 0600 temporary of its own)."""
    if not hasattr(os, "fchmod"):
        return  # Windows: no POSIX modes to give.
    descriptor = os.open(temporary, os.O_RDONLY | _NO_FOLLOW | _CLOEXEC)
    try:
        os.fchmod(descriptor, umask_file_mode())
    finally:
        os.close(descriptor)


def open_for_writing(path):
    """`path` opened for binary writing, truncated, without following a link at its name."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NO_FOLLOW | _CLOEXEC
    return os.fdopen(os.open(path, flags, 0o644), "wb")


def write_bytes_atomically(path, data):
    """Writes `data` to `path` through `atomic_path`."""
    write_stream_atomically(path, lambda file: file.write(data), expected_bytes=len(data))


def write_stream_atomically(path, write, expected_bytes=None):
    """Writes `path` through `atomic_path` with `write(file)`, given the open binary file.

    Example:

    >>> write_stream_atomically("shard-00000.npz", lambda file: np.savez(file, **arrays))
    """
    with atomic_path(path, expected_bytes=expected_bytes) as temporary:
        with open_for_writing(temporary) as file:
            write(file)


def write_text_atomically(path, text):
    """Writes `text` as UTF-8 with "\\n" line ends to `path` through `atomic_path`."""
    write_bytes_atomically(path, text.encode("utf-8"))


def write_json_atomically(path, value, sort_keys=True):
    """Writes `value` as indented UTF-8 JSON (a final newline) to `path`, atomically."""
    text = json.dumps(value, indent=2, sort_keys=sort_keys, ensure_ascii=False) + "\n"
    write_text_atomically(path, text)


def remove_stale_temporaries(path):
    """Deletes the temporaries of writes to `path` whose writing process is gone.

    Best effort: never raises; temporaries of running processes are left alone.

    Returns:
        The paths deleted.
    """
    path = pathlib.Path(path)
    prefix = temporary_prefix(path)
    removed = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        owner = _OWNER.match(entry.name[len(prefix) :])
        if owner is None or process_is_running(int(owner.group(1))):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            continue
        removed.append(pathlib.Path(entry.path))
    return removed


def fsync_file(path):
    """Flushes the file `path` to disk (a link at `path` is not followed: an error)."""
    descriptor = os.open(path, os.O_RDONLY | _NO_FOLLOW | _CLOEXEC)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def fsync_directory(folder):
    """Makes renames inside `folder` durable (a no-op on Windows, which cannot open
    folders so and journals renames already)."""
    if os.name == "nt":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
