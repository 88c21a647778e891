"""One fine-tuning run folder in a line: what it trained, on what, how well, how it ended."""

import dataclasses
import datetime
import logging
import os
import pathlib

from kbert.finetuning.search_folder import JOURNAL_FILE
from kbert.finetuning.search_folder import TABLE_JSON
from kbert.finetuning.task_specs import TASK_SPECS
from kbert.training.run_state import CHECKPOINT_FILE
from kbert.training.run_state import MODEL_FOLDER
from kbert_gui.fine_tuning.run_record import RECORD_FILE
from kbert_gui.fine_tuning.run_record import RunRecord
from kbert_gui.services.score_words import PERCENT_SCORES
from kbert_gui.services.score_words import scores_in_percent

logger = logging.getLogger("gui")

# What makes a folder a run folder: kbert's checkpoint, model or search table, or the
# app's record of the run.
RUN_FILES = (
    CHECKPOINT_FILE, f"{MODEL_FOLDER}/metadata.json", TABLE_JSON, JOURNAL_FILE, RECORD_FILE
)
# How deep below the chosen folder runs are looked for ("runs/sst2/lr-2e-5").
MAX_DEPTH = 3
# The settings a run's line names, in this order.
SETTINGS_SHOWN = ("epochs", "batch_size", "learning_rate")


@dataclasses.dataclass(frozen=True)
class RunSummary:
    """What the Runs view lists of a run folder.

    Attributes:
        folder: the run folder.
        name: its path below the folder the view lists.
        task: the task name, or "" where nothing says.
        source: the model it started from, or "".
        train: the training file, or "".
        settings: the run's settings (the app's record), or {}.
        metric: the task's metric name, or "".
        best_score: the best evaluation score, or None.
        best_at: where that score is: "epoch 2", or a search's "trial 3"; "" if none.
        modified: when a file of the run last changed (a POSIX time).
        status: "model saved", "search: 3 trials", "checkpoint only", ...
        model_path: the saved model (a kbert preset folder), or None.
        record: the app's `RunRecord` of the run (curves, setup), or None.
        history: each finished epoch's logs (dicts) from kbert's training checkpoint,
            for a run the app did not record (one `kbert finetune` made), or ().
        problem: why a file of the run was not read, or "".
    """

    folder: pathlib.Path
    name: str
    task: str = ""
    source: str = ""
    train: str = ""
    settings: dict = dataclasses.field(default_factory=dict)
    metric: str = ""
    best_score: float = None
    best_at: str = ""
    modified: float = 0.0
    status: str = ""
    model_path: pathlib.Path = None
    record: RunRecord = None
    history: tuple = ()
    problem: str = ""

    @property
    def when(self):
        """The time of the run's last change, "2026-12-07 15:40"."""
        return datetime.datetime.fromtimestamp(self.modified).strftime("%Y-%m-%d %H:%M")

    @property
    def settings_text(self):
        """"epochs 3 · batch size 32 · learning rate 2e-05"."""
        shown = [key for key in SETTINGS_SHOWN if isinstance(self.settings.get(key), (int, float))]
        return " · ".join(f"{key.replace('_', ' ')} {self.settings[key]:g}" for key in shown)

    def curve(self):
        """The run's evaluation score per epoch as `(epoch, value)` pairs (its record's,
        else its checkpoint's),
        a percentage where the tab writes the score as one ("87.5 %" -> 87.5)."""
        if not self.metric:
            return ()
        rows = self.record.epoch_rows if self.record is not None else self.history
        scale = 100 if self.metric in PERCENT_SCORES and not scores_in_percent(self.task) else 1
        return tuple(
            (row["epoch"], scale * row[self.metric])
            for row in rows
            if isinstance(row.get("epoch"), int)
            and isinstance(row.get(self.metric), (int, float))
        )


def find_runs(root, max_depth=MAX_DEPTH):
    """Every run folder in `root` (itself included), sorted by name; not inside a run
    (a search's trial folders belong to their search). Call in a worker."""
    root = pathlib.Path(root).expanduser()
    found = []
    pending = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        if is_run_folder(folder):
            found.append(read_run(folder, root))
            continue
        if depth >= max_depth:
            continue
        try:
            children = sorted(
                entry for entry in folder.iterdir() if entry.is_dir() and not entry.is_symlink()
            )
        except OSError as error:
            logger.warning("Not listing %s: %s", folder, error)
            continue
        pending.extend((child, depth + 1) for child in reversed(children))
    return sorted(found, key=lambda run: run.name)


def is_run_folder(folder):
    return any((pathlib.Path(folder) / name).is_file() for name in RUN_FILES)


def read_run(folder, root=None):
    """The `RunSummary` of the run folder `folder` (named below `root`)."""
    folder = pathlib.Path(folder)
    name = str(folder.relative_to(root)) if root is not None and folder != root else folder.name
    fields, problems = {"folder": folder, "name": name}, []
    try:
        record = RunRecord.read(folder)
    except ValueError as error:
        record, problems = None, [str(error)]
    if record is not None:
        fields.update(
            task=record.task, source=record.source, train=record.train,
            settings=dict(record.settings), record=record,
        )
    else:
        fields.update(_checkpoint_fields(folder, problems))
    fields.update(_model_fields(folder, problems))
    fields.update(_search_fields(folder, problems))
    task = fields.get("task", "")
    if task in TASK_SPECS:
        fields["metric"] = TASK_SPECS[task].metric
    fields["modified"] = _modified(folder)
    fields["status"] = _status(folder, fields)
    fields["problem"] = " ".join(problems)
    return RunSummary(**fields)


def _checkpoint_fields(folder, problems):
    """What kbert's training checkpoint says of a run: its task, the model it started
    from, its settings and each finished epoch's logs. The file may come from anyone:
    only values of the expected types are taken."""
    from kbert.training.training_checkpoint import TrainingCheckpoint

    path = folder / CHECKPOINT_FILE
    if not path.is_file():
        return {}
    try:
        state = TrainingCheckpoint(path).read_state()
    except (OSError, ValueError) as error:
        problems.append(f"{path} is not used: {error}")
        return {}
    task = state.get("task")
    task = task.get("task") if isinstance(task, dict) else None
    config, history = state.get("config"), state.get("history")
    fields = {
        "settings": {key: value for key, value in config.items()
                     if isinstance(value, (int, float, str))} if isinstance(config, dict) else {},
        "history": tuple(row for row in history if isinstance(row, dict))
        if isinstance(history, list) else (),
    }
    if isinstance(task, str):
        fields["task"] = task
    if isinstance(state.get("preset"), str):
        fields["source"] = state["preset"]
    return fields


def _model_fields(folder, problems):
    """The saved model's facts: its task, best epoch and score (its metadata)."""
    from kbert.files.bounded_reader import read_json

    path = folder / MODEL_FOLDER / "metadata.json"
    if not path.is_file():
        return {}
    try:
        tuning = read_json(path, folder=folder).get("fine_tuning")
    except (OSError, ValueError, AttributeError) as error:
        problems.append(f"{path} is not used: {error}")
        return {}
    if not isinstance(tuning, dict):
        return {"model_path": folder / MODEL_FOLDER}
    task = tuning.get("task") if isinstance(tuning.get("task"), str) else ""
    spec = TASK_SPECS.get(task)
    score = tuning.get(spec.metric) if spec is not None else None
    epoch = tuning.get("epoch")
    return {
        "model_path": folder / MODEL_FOLDER,
        **({"task": task} if task else {}),
        "best_score": score if isinstance(score, (int, float)) else None,
        "best_at": f"epoch {epoch}" if isinstance(epoch, int) else "",
    }


def _search_fields(folder, problems):
    """A search's facts: its trials, the best trial's score (its table)."""
    from kbert.files.bounded_reader import read_json

    path = folder / TABLE_JSON
    if not path.is_file():
        return {}
    try:
        table = read_json(path, "data", folder=folder)
        trials = [row for row in table.get("trials", []) if isinstance(row, dict)]
        metric = table.get("metric")
    except (OSError, ValueError, AttributeError) as error:
        problems.append(f"{path} is not used: {error}")
        return {}
    scores = [
        row for row in trials
        if isinstance(row.get(metric), (int, float)) and isinstance(row.get("trial"), int)
    ]
    # The first trial among equals, as the search keeps it.
    best = max(scores, key=lambda row: (row[metric], -row["trial"]), default=None)
    total = table.get("total_trials")
    fields = {"search_trials": (len(trials), total if isinstance(total, int) else None)}
    if best is not None:
        fields.update(best_score=best[metric], best_at=f"trial {best['trial'] + 1}")
    return fields


def _modified(folder):
    times = []
    for name in RUN_FILES:
        try:
            times.append(os.stat(folder / name).st_mtime)
        except OSError:
            pass
    return max(times, default=0.0)


def _status(folder, fields):
    trials = fields.pop("search_trials", None)
    if trials is not None:
        finished, total = trials
        return f"search: {finished} of {total if total is not None else '?'} trials finished"
    if fields.get("model_path") is not None:
        return "model saved"
    if (folder / CHECKPOINT_FILE).is_file():
        return "checkpoint only (no epoch finished)"
    return "not started"
