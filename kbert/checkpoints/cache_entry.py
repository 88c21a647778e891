"""Filling one entry of the model cache when several processes want it at once.

Two commands started together on the same uncached model (two `kbert fill-mask --model
hf_folder`, the app and a script) both find the entry missing. One converts it; the
other waits for that writer (its `kbert.files.OutputLock`), says so after a second, and
then reads the finished entry. Only writers of an output the user chose are refused
(`kbert convert` to a folder being written); a reader of the cache never is.

An entry is a converted preset unless the caller says what a complete entry is
(`is_complete`): the ONNX Runtime engine's graphs (`kbert.inference.onnx_cache_entry`)
are filled the same way.
"""

import logging
import os
import pathlib
import time

from kbert.checkpoints.kbert_preset import is_kbert_preset
from kbert.files.interrupted_saves import recover_interrupted_save
from kbert.files.interrupted_saves import remove_stale_leftovers
from kbert.files.output_lock import OutputLock
from kbert.files.output_locked_error import OutputLockedError

logger = logging.getLogger("kbert.checkpoints")

# How long a reader waits for another process's conversion before giving up (a
# BERT-large conversion from a slow disk takes about a minute).
WAIT_SECONDS = 600.0
# When the reader says that it waits, and how often it looks again.
NOTICE_AFTER_SECONDS = 1.0
POLL_SECONDS = 0.1


def fill_cache_entry(entry, write, wait_seconds=WAIT_SECONDS, is_complete=is_kbert_preset):
    """`entry` (a folder in the cache), written by `write(entry)` unless another
    process has written it or is writing it.

    The entry's lock is held while it is checked and written, so of several processes
    exactly one runs `write`; the others wait for it (up to `wait_seconds`) and return
    the entry it wrote.

    Args:
        entry: the folder; its parent must exist.
        write: called with `entry` when it is not complete, under its lock.
        wait_seconds: how long to wait for another process's write.
        is_complete: called with `entry` under its lock: True when it needs no
            writing. By default, when it is a kbert preset.

    Raises:
        OutputLockedError: when the other writer takes longer than `wait_seconds`, naming
            its process id.
    """
    _remove_planted_link(entry)
    remove_stale_leftovers(pathlib.Path(entry).parent)
    lock = OutputLock(entry)
    started = time.monotonic()
    told = False
    while True:
        try:
            with lock:
                recover_interrupted_save(entry)
                if not is_complete(entry):
                    write(entry)
                return entry
        except OutputLockedError as error:
            waited = time.monotonic() - started
            if waited > wait_seconds:
                raise
            if waited >= NOTICE_AFTER_SECONDS and not told:
                holder = f"process {error.holder_pid}" if error.holder_pid is not None else "another process"
                logger.warning(
                    "Waiting for %s, which is writing the same cache entry %s.", holder, entry
                )
                told = True
            time.sleep(POLL_SECONDS)


def _remove_planted_link(entry):
    """kbert never makes a cache entry a link: one found there (planted to lead the cache
    elsewhere) is removed, not followed, before the entry is locked, checked or read."""
    if os.path.islink(entry):
        logger.warning(
            "Removing %s: a link to %s where kbert keeps a cache entry of its own.",
            entry, os.path.realpath(entry),
        )
        os.unlink(entry)
