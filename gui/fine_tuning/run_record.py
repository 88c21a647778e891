"""What the app keeps of a fine-tuning run in the run's folder, to show it after a restart."""

import dataclasses
import json
import logging
import pathlib

from kbert_gui.services.export_files import write_atomically

logger = logging.getLogger("gui")

# Beside kbert's checkpoint and model in the run folder.
RECORD_FILE = "kbert-app-run.json"
RECORD_FORMAT = 1


@dataclasses.dataclass(frozen=True)
class RunRecord:
    """The setup and the live view of a run, as the fine-tuning tab showed them.

    kbert's checkpoint holds what training needs to resume exactly; this holds what the
    tab needs to look as it did: the form (task, files, columns, settings, probe, the
    model it started from), the curves, the evaluation rows and the log. The tab writes
    it once the run has started (kbert accepted the folder), at every epoch end and when
    the run ends; Resume after a restart reads it back.

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
        document = {"format": RECORD_FORMAT, **dataclasses.asdict(self)}
        text = json.dumps(document, ensure_ascii=False)
        write_atomically(pathlib.Path(folder) / RECORD_FILE, text.encode("utf-8"))

    @classmethod
    def read(cls, folder):
        """The record in `folder`, or None where there is none or it cannot be read."""
        from kbert.files.bounded_reader import read_json

        path = pathlib.Path(folder) / RECORD_FILE
        if not path.is_file():
            return None
        try:
            document = read_json(path, "data")
            if not isinstance(document, dict) or document.get("format") != RECORD_FORMAT:
                raise ValueError(f"{path}: not a record of this app's format {RECORD_FORMAT}.")
            fields = {
                field.name: document.get(field.name) if field.name == "search" else document[field.name]
                for field in dataclasses.fields(cls)
            }
        except (OSError, ValueError, KeyError) as error:
            logger.warning("Ignoring the run record %s: %s", path, error)
            return None
        fields["curve_names"] = tuple(fields["curve_names"])
        for name in ("loss_points", "metric_points", "epoch_rows", "log"):
            fields[name] = tuple(fields[name])
        return cls(**fields)
