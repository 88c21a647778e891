"""What the app keeps of a fine-tuning run in the run's folder, to show it after a restart."""

import dataclasses
import json
import os
import pathlib
import re

from kbert.files.atomic_write import write_bytes_atomically
from kbert.files.bounded_reader import open_checked
from kbert.files.bounded_reader import parse_json
from kbert_gui.fine_tuning.run_record_schema import MAX_RECORD_BYTES
from kbert_gui.fine_tuning.run_record_schema import MAX_RECORD_DEPTH
from kbert_gui.fine_tuning.run_record_schema import bounded
from kbert_gui.fine_tuning.run_record_schema import record_fields

# Beside kbert's checkpoint and model in the run folder.
RECORD_FILE = "kbert-app-run.json"
RECORD_FORMAT = 1
_REFUSING = re.compile(r"^Refusing to read .*?: ")


@dataclasses.dataclass(frozen=True)
class RunRecord:
    """The setup and the live view of a run, as the fine-tuning tab showed them.

    kbert's checkpoint holds what training needs to resume exactly; this holds what the
    tab needs to look as it did: the form (task, files, columns, settings, probe, the
    model it started from), the curves, the evaluation rows and the log. The tab writes
    it once the run has started (kbert accepted the folder), at every epoch end and when
    the run ends; Resume after a restart reads it back.

    A run folder may come from anyone, so `read` checks every field against
    `run_record_schema` before the tab restores any of it, and both `read` and `write`
    keep what the tab shows bounded (`run_record_schema.bounded`: thinned curves, the
    latest log lines and rows).

    Attributes:
        task: the task name.
        source: the model the run started from (as the app names it).
        train: the training file.
        evaluation: the evaluation file, or None.
        columns: the column mapping of a table, or None.
        settings: the hyperparameter form's values.
        probe: the probe's inputs, or None.
        curve_names: `(loss name, metric name, metric markers)` of the chart.
        loss_points: `[step, loss]` pairs.
        metric_points: `[step, value]` pairs.
        epoch_rows: the evaluation table's rows (dicts).
        log: the log's lines.
        search: the search form's `search()` for a search, None for a single run.
    """

    task: str
    source: str
    train: str
    evaluation: object
    columns: object
    settings: dict
    probe: object
    curve_names: tuple
    loss_points: tuple
    metric_points: tuple
    epoch_rows: tuple
    log: tuple
    search: object = None

    def write(self, folder):
        """Writes the record into the run folder `folder` (atomically), making the folder
        if the run has not yet (call once kbert has accepted the folder for the run)."""
        pathlib.Path(folder).mkdir(parents=True, exist_ok=True)
        document = {"format": RECORD_FORMAT, **bounded(dataclasses.asdict(self))}
        data = _encoded(document)
        while len(data) > MAX_RECORD_BYTES and document["log"]:
            # Only a log of thousands of long lines gets here: its older half goes, so
            # that `read` takes what the app wrote.
            document["log"] = document["log"][len(document["log"]) // 2 + 1 :]
            data = _encoded(document)
        write_bytes_atomically(pathlib.Path(folder) / RECORD_FILE, data)

    @classmethod
    def read(cls, folder):
        """The record in `folder`, or None where there is none. Call in a worker.

        Read through kbert's bounded reader (no link out of the folder, at most
        `MAX_RECORD_BYTES`, JSON at most `MAX_RECORD_DEPTH` deep), then checked field by
        field.

        Raises:
            ValueError: one sentence naming the file and what is wrong with it.
        """
        path = pathlib.Path(folder) / RECORD_FILE
        if not os.path.lexists(path):
            return None
        try:
            fields = record_fields(_read_document(path), RECORD_FORMAT)
        except (OSError, ValueError) as error:
            # The bounded reader's refusals name the file, which the sentence names already.
            reason = _REFUSING.sub("", str(error)).rstrip(".")
            raise ValueError(f"The run record {str(path)!r} is not used: {reason}.") from None
        return cls(**fields)


def _encoded(document):
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


def _read_document(path):
    """The parsed JSON of `path`, through kbert's bounded reader with the record's caps."""
    with open_checked(path) as file:
        size = os.fstat(file.fileno()).st_size
        if size > MAX_RECORD_BYTES:
            raise ValueError(
                f"it has {size:,} bytes, more than the {MAX_RECORD_BYTES:,} bytes a run "
                "record may have"
            )
        data = file.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        raise ValueError(f"it grew beyond {MAX_RECORD_BYTES:,} bytes while it was read")
    return parse_json(data, path.name, max_depth=MAX_RECORD_DEPTH)
