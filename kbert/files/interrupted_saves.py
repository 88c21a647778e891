"""Crash recovery of folder saves: what a killed save leaves behind is repaired on next use.

Folder saves (`kbert.files.atomic_folder.staged_folder`) write `.NAME.tmp-PID-XXXX/`
beside the folder NAME, then swap it in. Resolving or saving a folder first finishes
any save to it that a crash interrupted (`recover_interrupted_save`), so a folder is
always found as it was before or after the last save, never half-written.
"""

import contextlib
import logging
import os
import pathlib
import re
import shutil
import time

from kbert.files.output_lock import LOCK_SUFFIX
from kbert.files.output_lock import OutputLock
from kbert.files.output_lock import remove_stale_lock
from kbert.files.process_liveness import process_is_running
from kbert.files.sibling_names import sibling_stem

logger = logging.getLogger("kbert.files")

# A save writes the staging folder `.NAME.tmp-PID-XXXX/`, renames NAME to
# `.NAME.old-PID-XXXX/NAME`, the staging folder to NAME, and deletes the retired copy.
# PID is the saving process, so a leftover whose process is gone is known to be
# abandoned and one whose process still runs is left alone.
STAGING_INFIX = ".tmp-"
RETIRED_INFIX = ".old-"
# Inside a retired folder, the old copy is renamed to this before it is deleted: a
# retired `NAME` is therefore always complete, and safe to restore.
DISCARDED_NAME = "discarded"
# How long a loader waits for a running save to finish its swap (microseconds in
# practice) before reporting the folder as missing.
_SWAP_WAIT_SECONDS = 2.0
# Leftovers without a process id (written by kbert before ids were recorded) are
# removed once they are this old.
_UNOWNED_LEFTOVER_SECONDS = 3600
_OWNER = re.compile(r"(\d+)(?:-|$)")


def staging_prefix(folder):
    """The name prefix of the staging folders of saves to `folder`, for this process."""
    return f".{sibling_stem(pathlib.Path(folder).name)}{STAGING_INFIX}{os.getpid()}-"


def retired_prefix(folder):
    """The name prefix of the retired copies of `folder`, for this process."""
    return f".{sibling_stem(pathlib.Path(folder).name)}{RETIRED_INFIX}{os.getpid()}-"


def recover_interrupted_save(folder):
    """Repairs what a save to `folder` killed mid-way left behind.

    A save killed between moving the old folder aside and moving the new one in
    leaves no `folder` but a complete retired copy: that copy is moved back. Staging
    and retired folders of processes that no longer run are then deleted. Leftovers of
    running processes (a save in progress) are not touched; when the folder is missing
    only because such a save is in the middle of its swap, this waits for it briefly.

    The lock file of a writer that was killed (`kbert.files.output_lock`) is deleted
    too. Best effort: a folder that cannot be listed or changed (read-only media) is
    left as it is. Never raises for that reason.

    Returns:
        True when `folder` was missing and has been restored.
    """
    folder = pathlib.Path(folder)
    if not folder.name:
        return False
    OutputLock(folder).remove_stale()
    deadline = time.monotonic() + _SWAP_WAIT_SECONDS
    while True:
        try:
            leftovers = _leftovers(folder)
        except OSError:
            return False
        if not leftovers:
            return False
        restored = False
        if not folder.exists():
            restored = _restore_retired(folder, leftovers)
            if not folder.exists() and any(
                kind == RETIRED_INFIX and running for _, kind, running in leftovers
            ):
                if time.monotonic() < deadline:
                    time.sleep(0.01)
                    continue
        for path, _, running in leftovers:
            if not running and path.exists():
                shutil.rmtree(path, ignore_errors=True)
        return restored


def _leftovers(folder):
    """`(path, kind, owner_is_running)` for every staging and retired sibling of `folder`."""
    stem = sibling_stem(folder.name)
    prefixes = {f".{stem}{kind}": kind for kind in (STAGING_INFIX, RETIRED_INFIX)}
    found = []
    with os.scandir(folder.parent) as entries:
        for entry in entries:
            for prefix, kind in prefixes.items():
                if entry.name.startswith(prefix) and entry.is_dir(follow_symlinks=False):
                    path = pathlib.Path(entry.path)
                    owner = _owner_running(path, entry.name[len(prefix) :])
                    found.append((path, kind, owner))
    return found


def _owner_running(path, suffix):
    match = _OWNER.match(suffix)
    if match is None:
        try:
            age = time.time() - path.stat().st_mtime
        except OSError:
            return False
        return age < _UNOWNED_LEFTOVER_SECONDS
    return process_is_running(int(match.group(1)))


def _restore_retired(folder, leftovers):
    # A retired copy holds `folder.name` only while it is complete: saves rename it to
    # DISCARDED_NAME before deleting it. The newest abandoned one was the live folder.
    candidates = [
        path / folder.name
        for path, kind, running in leftovers
        if kind == RETIRED_INFIX and not running and (path / folder.name).is_dir()
    ]
    if not candidates:
        return False
    newest = max(candidates, key=lambda path: path.stat().st_mtime)
    try:
        os.rename(newest, folder)
    except OSError as error:
        logger.warning("Could not restore %s from %s: %s", folder, newest, error)
        return False
    logger.warning(
        "%s: a save was interrupted after moving the previous version aside; "
        "restored the previous version from %s.",
        folder,
        newest.parent.name,
    )
    return True


def remove_stale_leftovers(folder):
    """Deletes what killed writers left in `folder`: lock files no process holds, and
    temporaries, staging and retired folders of processes that no longer run.

    The cache calls it for the folder of an entry it fills, so what a killed `kbert`
    left beside other entries goes on the next use of the cache, not only on the next
    write of the same entry. Best effort: never raises; what a running process owns is
    left alone.
    """
    folder = pathlib.Path(folder)
    try:
        names = [entry.name for entry in os.scandir(folder)]
    except OSError:
        return
    for name in names:
        if not name.startswith("."):
            continue
        if name.endswith(LOCK_SUFFIX):
            remove_stale_lock(folder / name)
            continue
        for infix in (STAGING_INFIX, RETIRED_INFIX):
            head, found, owner = name.partition(infix)
            match = _OWNER.match(owner) if found and head else None
            if match is not None and not process_is_running(int(match.group(1))):
                path = folder / name
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(path)
                break
