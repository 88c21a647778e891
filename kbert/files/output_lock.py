"""One writer at a time per output folder: an advisory lock on a file beside it."""

import contextlib
import errno
import logging
import os
import pathlib
import threading
import time

try:
    import fcntl
except ImportError:  # Windows: outputs are not locked (see OutputLock).
    fcntl = None

from kbert.files.linkless_open import open_folder
from kbert.files.linkless_open import open_in_folder
from kbert.files.linkless_open import same_file
from kbert.files.output_locked_error import OutputLockedError
from kbert.files.sibling_names import sibling_stem

logger = logging.getLogger("kbert.files")

LOCK_SUFFIX = ".lock"
_BUSY = (errno.EAGAIN, errno.EACCES, getattr(errno, "EWOULDBLOCK", errno.EAGAIN))
# Locks this process holds: lock file -> _Hold. flock locks belong to open files, so a
# second acquisition in this process would conflict with the first; the registry makes
# the lock re-entrant for the thread that holds it, and refuses other threads.
_held = {}
_registry_lock = threading.Lock()
_warned_unlocked = []


class _Hold:
    def __init__(self, thread, descriptor):
        self.thread = thread
        self.descriptor = descriptor
        self.count = 1


class OutputLock:
    """An advisory lock on an output folder, held by one writer at a time.

    Every writer of a folder kbert produces (preset saves, `convert`, the exports, a
    fine-tuning or pretraining run's output folder) holds this lock while it checks the
    destination and writes it, so of two writers one proceeds and the other gets an
    `OutputLockedError` naming the first's process id, instead of both "succeeding"
    with one result silently lost.

    The lock is `fcntl.flock` on `.NAME.lock` in the folder's parent. The parent must
    be a real folder, and the lock file is opened inside it without following links: a
    lock file that is a link, a hard link to another file or anything but a regular
    file is refused with `FileRefusedError`, never written through. The kernel drops
    it when its process dies, however it dies; the file itself is deleted on release
    (and a stale one, left by a killed writer, by `remove_stale`). The lock is
    re-entrant within the thread that holds it (a conversion holds it and then saves the
    preset, which takes it again); another thread of the same process is refused like
    another process. Where `fcntl` does not exist (Windows) or the file system does not
    support locks, writes go ahead unlocked, with a warning once.

    Args:
        folder: the output folder (it need not exist yet).

    Example:

    >>> with OutputLock("presets/my_model"):
    ...     write_the_preset()
    """

    def __init__(self, folder):
        # Resolved, so that every spelling of one folder (a relative path, a link to it)
        # meets at the same lock file.
        self.folder = pathlib.Path(os.path.realpath(pathlib.Path(folder).expanduser()))
        self.lock_path = self.folder.parent / f".{sibling_stem(self.folder.name)}{LOCK_SUFFIX}"

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc_info):
        self.release()

    def acquire(self):
        """Takes the lock, or raises `OutputLockedError` at once if another writer has it."""
        key = str(self.lock_path)
        thread = threading.get_ident()
        with _registry_lock:
            hold = _held.get(key)
            if hold is not None:
                if hold.thread != thread:
                    raise OutputLockedError(
                        self.folder, os.getpid(), " (another thread of this process)"
                    )
                hold.count += 1
                return
            _held[key] = _Hold(thread, self._lock_file())

    def release(self):
        """Gives the lock back (the last of nested acquisitions deletes the lock file)."""
        key = str(self.lock_path)
        with _registry_lock:
            hold = _held.get(key)
            if hold is None or hold.thread != threading.get_ident():
                return
            hold.count -= 1
            if hold.count:
                return
            del _held[key]
            if hold.descriptor is not None:
                # Unlinked while still locked: a writer that opened the old file retries
                # on the new one (see `_lock_file`).
                with contextlib.suppress(OSError):
                    if same_file(hold.descriptor, None, self.lock_path):
                        os.unlink(self.lock_path)
                os.close(hold.descriptor)

    def remove_stale(self):
        """Deletes a lock file no process holds (its writer was killed). Never raises."""
        if str(self.lock_path) not in _held:
            remove_stale_lock(self.lock_path)

    def _lock_file(self):
        """An open, flock-ed descriptor of the lock file, or None where locks do not work."""
        if fcntl is None:
            _warn_unlocked("this platform has no fcntl")
            return None
        self.folder.parent.mkdir(parents=True, exist_ok=True)
        directory = open_folder(self.folder.parent)
        try:
            return self._lock_in(directory)
        finally:
            os.close(directory)

    def _lock_in(self, directory):
        name = self.lock_path.name
        while True:
            descriptor = self._open_lock_file(directory)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                holder = _recorded_pid(descriptor)
                os.close(descriptor)
                if error.errno in _BUSY:
                    raise OutputLockedError(self.folder, holder) from None
                _warn_unlocked(f"the file system does not support locks ({error.strerror})")
                return None
            if not same_file(descriptor, directory, name):
                # The previous holder deleted the file between our open and our lock.
                os.close(descriptor)
                continue
            os.ftruncate(descriptor, 0)
            os.pwrite(descriptor, f"{os.getpid()}\n".encode("ascii"), 0)
            return descriptor

    def _open_lock_file(self, directory):
        """The lock file opened (created if missing) in `directory`, no link followed."""
        flags = os.O_RDWR | os.O_CREAT
        return open_in_folder(directory, self.lock_path.name, flags, self.lock_path)


def remove_stale_lock(lock_path):
    """Deletes the lock file `lock_path` unless a process holds it. Never raises.

    A link or anything but a plain lock file at that name is left alone (the writer that
    meets it refuses it).
    """
    if fcntl is None or str(lock_path) in _held:
        return
    lock_path = pathlib.Path(lock_path)
    try:
        directory = open_folder(lock_path.parent)
    except (OSError, ValueError):
        return
    try:
        descriptor = open_in_folder(directory, lock_path.name, os.O_RDWR, lock_path)
    except (OSError, ValueError):
        os.close(directory)
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if same_file(descriptor, directory, lock_path.name):
            os.unlink(lock_path.name, dir_fd=directory)
    except OSError:
        pass
    finally:
        os.close(descriptor)
        os.close(directory)


def _recorded_pid(descriptor, attempts=20, pause_s=0.005):
    """The holder's pid from the lock file. A holder writes it just after taking the
    lock, so an empty file is read again for up to `attempts * pause_s` seconds."""
    for attempt in range(attempts):
        try:
            text = os.pread(descriptor, 32, 0).decode("ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        if text.isdigit():
            return int(text)
        if text or attempt == attempts - 1:
            return None
        time.sleep(pause_s)
    return None


def _warn_unlocked(reason):
    if not _warned_unlocked:
        _warned_unlocked.append(reason)
        logger.warning(
            "Output folders are written without a lock (%s): do not run two writers on "
            "one output folder at once.",
            reason,
        )
