"""Files that cannot hurt: the bounded reader, atomic writes and output locks.

The bottom of kbert's import graph: it imports neither Keras nor any other kbert
package, and every other package reads and writes model and data files through it.

- `bounded_reader`: regular files inside their folder by real path, opened by an
  `openat` walk that follows no link, size caps per kind, depth-limited JSON, streamed
  lines.
- `load_budget`: the memory one load may allocate; declared sizes against storage.
- `atomic_write`: temp file + rename, free-space checks, stale temporaries removed.
- `atomic_folder`: `staged_folder`, a folder written beside its destination and swapped in; what a
  killed save leaves is repaired by `recover_interrupted_save` (`interrupted_saves`).
- `output_lock`: one writer per output folder; `exclusive_output` for training runs.
- `sibling_names`: the names of staging folders, temporaries and locks, within
  `NAME_MAX` whatever the destination's name.
- `broken_links`: one line for a symbolic link loop or a dangling link.
"""

from kbert.files.atomic_write import atomic_path
from kbert.files.atomic_write import check_free_space
from kbert.files.atomic_write import remove_stale_temporaries
from kbert.files.atomic_write import write_json_atomically
from kbert.files.atomic_write import write_text_atomically
from kbert.files.bounded_reader import SIZE_LIMITS
from kbert.files.bounded_reader import checked_path
from kbert.files.bounded_reader import open_checked
from kbert.files.bounded_reader import parse_json
from kbert.files.bounded_reader import read_bytes
from kbert.files.bounded_reader import read_json
from kbert.files.bounded_reader import read_lines
from kbert.files.bounded_reader import read_text
from kbert.files.exclusive_output import exclusive_output
from kbert.files.file_refused_error import FileRefusedError
from kbert.files.interrupted_saves import recover_interrupted_save
from kbert.files.load_budget import check_load_budget
from kbert.files.load_budget import check_stored_bytes
from kbert.files.output_lock import OutputLock
from kbert.files.output_locked_error import OutputLockedError
from kbert.files.process_liveness import process_is_running
from kbert.files.atomic_folder import replace_folder
from kbert.files.atomic_folder import staged_folder

__all__ = [
    "FileRefusedError",
    "OutputLock",
    "OutputLockedError",
    "SIZE_LIMITS",
    "atomic_path",
    "check_free_space",
    "check_load_budget",
    "check_stored_bytes",
    "checked_path",
    "exclusive_output",
    "open_checked",
    "parse_json",
    "process_is_running",
    "read_bytes",
    "read_json",
    "read_lines",
    "read_text",
    "recover_interrupted_save",
    "remove_stale_temporaries",
    "replace_folder",
    "staged_folder",
    "write_json_atomically",
    "write_text_atomically",
]
