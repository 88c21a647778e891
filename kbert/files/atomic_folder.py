"""Writing a folder so that a crash or a full disk leaves the old version or the new one.

Every folder kbert writes (presets, and the exports in `kbert.checkpoints`) goes
through `staged_folder`: the files are written into a staging folder beside the
destination, flushed to disk, and then swapped in with two renames. A crash at any
point leaves the previous version or the new one; the next save or load of the folder
restores the previous version if the crash fell between the two renames, and removes
the leftovers (`kbert.files.interrupted_saves.recover_interrupted_save`).

Writers of one folder exclude each other: `staged_folder` holds the folder's
`kbert.files.OutputLock`, so a second writer fails at once with an error naming the
first one's process id. A full disk is an `OSError` (errno ENOSPC) with the previous
version in place and the staging folder removed.
"""

import contextlib
import os
import pathlib
import secrets
import shutil

from kbert.files.atomic_write import fsync_directory
from kbert.files.atomic_write import fsync_file
from kbert.files.atomic_write import raise_if_disk_full
from kbert.files.interrupted_saves import DISCARDED_NAME
from kbert.files.interrupted_saves import recover_interrupted_save
from kbert.files.interrupted_saves import retired_prefix
from kbert.files.interrupted_saves import staging_prefix
from kbert.files.output_lock import OutputLock


def _fsync_tree(folder):
    for path in pathlib.Path(folder).rglob("*"):
        if path.is_file():
            fsync_file(path)
    for path in [*pathlib.Path(folder).rglob("*"), pathlib.Path(folder)]:
        if path.is_dir():
            fsync_directory(path)


def _make_sibling(folder, prefix):
    # os.mkdir rather than tempfile.mkdtemp: the folder becomes the user's preset, so it
    # gets the umask's permissions, not mkdtemp's owner-only ones.
    while True:
        path = folder.parent / f"{prefix}{secrets.token_hex(4)}"
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        return path


def replace_folder(staging, folder):
    """Moves the complete folder `staging` to `folder`, replacing what is there.

    `folder`'s previous version is renamed into a retired sibling first and deleted
    only after the new version is in place, so between the two renames a complete copy
    always exists under a name `recover_interrupted_save` knows.
    """
    staging, folder = pathlib.Path(staging), pathlib.Path(folder)
    if not folder.exists():
        os.rename(staging, folder)
        fsync_directory(folder.parent)
        return
    retired = _make_sibling(folder, retired_prefix(folder))
    os.rename(folder, retired / folder.name)
    try:
        os.rename(staging, folder)
    except BaseException:
        os.rename(retired / folder.name, folder)
        shutil.rmtree(retired, ignore_errors=True)
        raise
    fsync_directory(folder.parent)
    # Renamed before deleting: a half-deleted copy must never look restorable.
    os.rename(retired / folder.name, retired / DISCARDED_NAME)
    shutil.rmtree(retired, ignore_errors=True)


@contextlib.contextmanager
def staged_folder(folder):
    """Yields an empty staging folder that replaces `folder` when the block succeeds.

    The caller writes every file into the yielded folder. On success the files are
    flushed and the folder swapped in with `replace_folder`; on any exception the
    staging folder is deleted and `folder` is untouched (a full disk surfaces as one
    `OSError` with errno ENOSPC). The caller decides beforehand whether `folder` may be
    replaced, holding `OutputLock(folder)` from that decision on; this holds it too.

    Raises:
        OutputLockedError: when another process or thread is writing `folder`.

    Example:

    >>> with staged_folder("exports/bert") as staging:
    ...     (staging / "config.json").write_text("{}")
    """
    folder = pathlib.Path(folder).expanduser().resolve()
    with OutputLock(folder):
        recover_interrupted_save(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = _make_sibling(folder, staging_prefix(folder))
        try:
            yield staging
            _fsync_tree(staging)
            replace_folder(staging, folder)
        except BaseException as error:
            shutil.rmtree(staging, ignore_errors=True)
            raise_if_disk_full(error, folder)
            raise
