"""Opening a file kbert writes inside a folder, never through a link planted at its name.

Writers of shared folders (lock files, a search's journal, copies into an output) open
their file with `open_in_folder`: the folder is opened first (it must be a real folder,
not a link), then the file relative to that descriptor with `O_NOFOLLOW`, non-blocking
(a FIFO planted there cannot hang the open). A file that is a link, a hard link to
another name, or anything but a regular file is refused with `FileRefusedError`, before
a byte is written: a `.NAME.lock` linked to `~/.bashrc` must not get the file truncated.
"""

import contextlib
import errno
import os
import stat

from kbert.files.file_refused_error import FileRefusedError

_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NON_BLOCKING = getattr(os, "O_NONBLOCK", 0)
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NO_FOLLOW | _CLOEXEC
# errno of an open -> why the name is refused.
_REFUSED = {
    errno.ELOOP: "it is a symbolic link, and kbert never writes through one",
    errno.EISDIR: "it is a folder",
    errno.ENXIO: "it is not a regular file",
}


def open_folder(folder, action="write"):
    """A descriptor of `folder`, which must be a real folder (not a link to one).

    Raises:
        FileRefusedError: when `folder` is a link or not a folder.
    """
    try:
        return os.open(folder, _FOLDER_FLAGS)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise FileRefusedError(
                folder, "it is not a real folder (a link or a file)", action
            ) from None
        raise


def open_in_folder(directory, name, flags, path, action="write", mode=0o644):
    """A descriptor of the file `name` in the open folder `directory`, no link followed.

    Args:
        directory: a folder descriptor (`open_folder`).
        name: the file's name in it (one component).
        flags: `os.O_*` flags (`O_NOFOLLOW`, `O_NONBLOCK` and `O_CLOEXEC` are added).
        path: the file's path, for messages.
        action: "write" or "read", for messages.
        mode: the permissions of a file created.

    Raises:
        FileRefusedError: when the name is a link, a hard link to another name, or not a
            regular file; naming `path` and saying to delete it.
    """
    flags |= _NO_FOLLOW | _NON_BLOCKING | _CLOEXEC
    try:
        descriptor = os.open(name, flags, mode, dir_fd=directory)
    except OSError as error:
        if error.errno in _REFUSED:
            raise FileRefusedError(path, f"{_REFUSED[error.errno]}; delete it", action) from None
        raise
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise FileRefusedError(path, "it is not a regular file; delete it", action)
        # More than one name: a hard link to another file. None: another process deleted
        # it between the open and now (a released lock); its callers check the name again.
        if status.st_nlink > 1:
            raise FileRefusedError(
                path, "it has other names (hard links to another file); delete it", action
            )
        if _NON_BLOCKING:
            os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


@contextlib.contextmanager
def opened_in_folder(folder, name, flags, action="write", mode=0o644):
    """`open_in_folder` for a folder path; yields the descriptor and closes it after."""
    directory = open_folder(folder, action)
    try:
        descriptor = open_in_folder(directory, name, flags, os.path.join(folder, name), action, mode)
    finally:
        os.close(directory)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


def same_file(descriptor, directory, name):
    """Whether `name` in the folder descriptor `directory` (None: a path) is `descriptor`'s file."""
    try:
        status = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except OSError:
        return False
    opened = os.fstat(descriptor)
    return (opened.st_dev, opened.st_ino) == (status.st_dev, status.st_ino)
