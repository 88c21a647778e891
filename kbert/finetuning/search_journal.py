"""A search's Optuna journal, read and written as a file that cannot hurt.

Optuna's `JournalFileBackend` opens the journal by its path (a `search.journal` linked to
another file gets the study appended to that file), reads a record of any size whole,
and a record torn by a killed writer breaks every later run ("Invalid \\escape"). This
backend keeps Optuna's format and its lock, and:

- opens the journal inside the search folder without following links (a link, a hard
  link or a special file is refused);
- reads records of at most `MAX_RECORD_BYTES`, nested at most `MAX_JSON_DEPTH` deep,
  each checked by `check_record` before Optuna applies it;
- repairs a torn last record (the tail after the last complete line, left by a writer
  killed mid-append) before it appends, with a warning naming the file and line;
- reports every problem as one `ValueError` naming the file and line.
"""

import json
import logging
import os
import pathlib

from kbert.files.bounded_reader import MAX_JSON_DEPTH
from kbert.files.bounded_reader import json_nesting_depth
from kbert.files.linkless_open import opened_in_folder
from kbert.finetuning.journal_records import check_record

logger = logging.getLogger("kbert.finetuning")

# A record is one trial's row or point, or a study's settings: a few KB. Optuna's own
# writes of a search never come near this.
MAX_RECORD_BYTES = 2**20
_TAIL_CHUNK_BYTES = 2**16


def search_journal_backend(path):
    """A `SearchJournal` of the journal file `path`, as an Optuna journal backend."""
    from optuna.storages.journal import BaseJournalBackend

    BaseJournalBackend.register(SearchJournal)
    return SearchJournal(path)


class SearchJournal:
    """Optuna's journal file format, opened without links and checked record by record.

    An Optuna `BaseJournalBackend` (registered as one by `search_journal_backend`, since
    Optuna is an optional package).

    Args:
        journal_path: the journal file (created if missing).
    """

    def __init__(self, journal_path):
        self.path = pathlib.Path(journal_path)
        # The lock Optuna's own file backend takes: processes of older versions
        # sharing the folder still exclude each other.
        from optuna.storages.journal import JournalFileSymlinkLock

        self._lock = JournalFileSymlinkLock(str(self.path))
        self._offsets = {0: 0}
        with self._opened(os.O_WRONLY | os.O_CREAT | os.O_APPEND):
            pass

    def _opened(self, flags):
        return opened_in_folder(str(self.path.parent), self.path.name, flags)

    def read_logs(self, log_number_from):
        with self._opened(os.O_RDONLY) as descriptor:
            with os.fdopen(os.dup(descriptor), "rb") as file:
                yield from self._records(file, log_number_from)

    def _records(self, file, log_number_from):
        number = max((n for n in self._offsets if n <= log_number_from), default=0)
        file.seek(self._offsets[number])
        while True:
            line = file.readline(MAX_RECORD_BYTES + 1)
            if not line.endswith(b"\n"):
                if len(line) > MAX_RECORD_BYTES:
                    raise ValueError(
                        f"{self.path}:{number + 1}: a journal record longer than "
                        f"{MAX_RECORD_BYTES} bytes. {REMEDY}"
                    )
                return  # The end, or a record being written (or torn: see append_logs).
            self._offsets[number + 1] = self._offsets[number] + len(line)
            number += 1
            if number > log_number_from:
                yield self._parse(line, number)

    def _parse(self, line, number):
        source = f"{self.path}:{number}"
        try:
            if json_nesting_depth(line) > MAX_JSON_DEPTH:
                raise ValueError(f"nested more than {MAX_JSON_DEPTH} levels deep")
            record = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError) as error:
            raise ValueError(
                f"{source}: not a journal record ({_short(error)}). {REMEDY}"
            ) from None
        try:
            return check_record(record, source)
        except ValueError as error:
            raise ValueError(f"{error} {REMEDY}") from None

    def append_logs(self, logs):
        text = "".join(json.dumps(log, separators=(",", ":")) + "\n" for log in logs)
        self._lock.acquire()
        try:
            with self._opened(os.O_RDWR | os.O_APPEND) as descriptor:
                self._repair_torn_tail(descriptor)
                data = memoryview(text.encode("utf-8"))
                while data:
                    data = data[os.write(descriptor, data):]
                os.fsync(descriptor)
        finally:
            self._lock.release()

    def _repair_torn_tail(self, descriptor):
        """Cuts what follows the last complete line (a writer killed mid-record)."""
        size = os.fstat(descriptor).st_size
        end = size
        while end > 0:
            start = max(0, end - _TAIL_CHUNK_BYTES)
            chunk = os.pread(descriptor, end - start, start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                end = start + newline + 1
                break
            end = start
        if end == size:
            return
        with open(os.dup(descriptor), "rb") as file:
            lines = sum(block.count(b"\n") for block in iter(lambda: file.read(2**20), b""))
        os.ftruncate(descriptor, end)
        logger.warning(
            "%s:%d: removed a torn journal record (%d bytes, left by a process that "
            "stopped while writing it).", self.path, lines + 1, size - end,
        )


REMEDY = (
    "The search cannot go on from this journal: move it away to start the search over "
    "(finished trials' folders are kept)."
)


def _short(error):
    text = str(error)
    return text if len(text) <= 80 else text[:77] + "..."
