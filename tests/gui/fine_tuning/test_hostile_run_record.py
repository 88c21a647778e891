"""A hostile app run record (`kbert-app-run.json`) in a run folder the fine-tuning tab is
pointed at: nothing escapes a Qt slot, nothing of it is restored, and one sentence names
the file and the field; a big record is shown bounded; "Use its setup" asks before it
switches the app's model to the record's.

Each run folder holds a real (tiny) training checkpoint, so the tab reads the record as
it does after a restart; the form names no training file, so a record it accepts would
fill the form in.
"""

import json
import math
import shutil

import pytest
from fine_tuning_helpers import data  # noqa: F401 (a fixture)
from fine_tuning_helpers import tab  # noqa: F401 (a fixture)
from gui_helpers import FROZEN_WINDOW_MS
from gui_helpers import Heartbeat
from PySide6.QtWidgets import QMessageBox

from kbert.training.run_state import CHECKPOINT_FILE
from kbert_gui.fine_tuning.fine_tuning_format import TRAINING_LOSS
from kbert_gui.fine_tuning.run_record import RECORD_FILE
from kbert_gui.fine_tuning.run_record import RunRecord
from kbert_gui.fine_tuning.run_record_schema import MAX_CURVE_POINTS
from kbert_gui.fine_tuning.run_record_schema import MAX_EPOCH_ROWS
from kbert_gui.fine_tuning.run_record_schema import MAX_LOG_LINES
from kbert_gui.fine_tuning.run_record_schema import MAX_RECORD_BYTES

CHECK_TIMEOUT_MS = 120_000
# Long enough for a slot that fails to fail again (an earlier app looped on one).
SETTLE_MS = 300


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A valid fine-tuning checkpoint of a classification run (tiny variables)."""
    import keras

    from kbert.training import TrainingCheckpoint

    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    path = tmp_path_factory.mktemp("checkpoint") / CHECKPOINT_FILE
    state = {"task": {"task": "classification"}, "preset": "a model", "config": {}}
    TrainingCheckpoint(path).save(model, state)
    return path


def valid_record(data):
    """A record as the app writes it: a cancelled two-epoch classification run."""
    return {
        "format": 1,
        "task": "classification",
        "source": str(data["preset"]),
        "train": str(data["long_train"]),
        "evaluation": str(data["evaluation"]),
        "columns": {"text_column": "text", "pair_column": None, "label_column": "label"},
        "settings": {
            "epochs": 2,
            "batch_size": 8,
            "learning_rate": 0.001,
            "seed": 7,
            "patience": None,
            "precision": "float32",
            "data_parallel": False,
        },
        "probe": {"text": "a lovely cat"},
        "curve_names": [TRAINING_LOSS, "evaluation accuracy", True],
        "loss_points": [[1, 0.71], [2, 0.69], [3, 0.66]],
        "metric_points": [[3, 0.5]],
        "epoch_rows": [{"epoch": 1, "loss": 0.66, "accuracy": 0.5}],
        "log": ["12:00:00  Fine-tuning started", "12:00:05  — Cancel requested"],
        "search": None,
    }


def _set(path, value):
    """A change of the record: the field at `path` (keys and indices) set to `value`."""

    def change(record):
        *parents, last = path
        target = record
        for key in parents:
            target = target[key]
        target[last] = value
        return record

    return change


def _drop(name):
    def change(record):
        del record[name]
        return record

    return change


def _nested(depth):
    value = "deep"
    for _ in range(depth):
        value = [value]
    return value


def _loss_points_text(count):
    # Written as text: json.dumps of three million pairs takes seconds.
    return "[" + ",".join(map("[{},0.5]".format, range(1, count + 1))) + "]"


def _many_points(record):
    record["loss_points"] = "@LOSS@"
    text = json.dumps(record).replace('"@LOSS@"', _loss_points_text(3_000_000))
    return text.encode("utf-8")


def _many_log_lines(record):
    record["log"] = [f"12:00:00  Step {number} of the run" for number in range(1_000_000)]
    return record


# id: (change of the valid record: a new record or the file's bytes, words the sentence
# says besides the file's name).
HOSTILE = {
    "missing-train": (_drop("train"), "train"),
    "missing-settings": (_drop("settings"), "settings"),
    "train-integer": (_set(["train"], 5), "train"),
    "train-blank": (_set(["train"], "   "), "train"),
    "train-list": (_set(["train"], ["a.csv", "b.csv"]), "train"),
    "train-too-long": (_set(["train"], "x" * 100_000), "train"),
    "task-unknown": (_set(["task"], "evil-task"), "task"),
    "task-list": (_set(["task"], ["classification"]), "task"),
    "task-markup": (_set(["task"], '<a href="use-setup">classification</a>'), "task"),
    "source-dict": (_set(["source"], {"hf": "attacker"}), "source"),
    "evaluation-dict": (_set(["evaluation"], {"path": "x"}), "evaluation"),
    "columns-string": (_set(["columns"], "text"), "columns"),
    "columns-unknown-key": (_set(["columns", "evil_column"], "x"), "columns"),
    "settings-list": (_set(["settings"], [1, 2, 3]), "settings"),
    "settings-huge-int": (_set(["settings", "epochs"], 10**30), "epochs"),
    "settings-nan": (_set(["settings", "learning_rate"], math.nan), "learning_rate"),
    "settings-negative-batch": (_set(["settings", "batch_size"], -8), "batch_size"),
    "settings-string-epochs": (_set(["settings", "epochs"], "3"), "epochs"),
    "settings-bool-seed": (_set(["settings", "seed"], True), "seed"),
    "probe-unknown-field": (_set(["probe"], {"evil": "x"}), "probe"),
    "probe-list-text": (_set(["probe", "text"], ["a", "b"]), "probe"),
    "curve-names-short": (_set(["curve_names"], ["loss"]), "curve_names"),
    "loss-points-strings": (_set(["loss_points"], [["a", "b"]]), "loss_points"),
    "loss-points-nan": (_set(["loss_points"], [[1, math.nan]]), "loss_points"),
    "loss-points-huge-step": (_set(["loss_points"], [[10**30, 0.5]]), "loss_points"),
    "metric-points-negative-step": (_set(["metric_points"], [[-3, 0.5]]), "metric_points"),
    "epoch-rows-integers": (_set(["epoch_rows"], [1, 2]), "epoch_rows"),
    "log-integers": (_set(["log"], [1, 2]), "log"),
    "search-string": (_set(["search"], "paper"), "search"),
    "search-space-integer": (
        _set(["search"], {"space": 5, "restarts": 1, "trials": None, "total_trials": 9}),
        "search",
    ),
    "nested-deep": (_set(["columns"], _nested(100)), "nested"),
    "format-other": (_set(["format"], 99), "format"),
    "not-an-object": (lambda record: [record], "object"),
    "three-million-loss-points": (_many_points, "bytes"),
    "a-million-log-lines": (_many_log_lines, "bytes"),
}


def _write_run_folder(folder, checkpoint, content):
    folder.mkdir()
    shutil.copyfile(checkpoint, folder / CHECKPOINT_FILE)
    if not isinstance(content, bytes):
        content = json.dumps(content).encode("utf-8")
    (folder / RECORD_FILE).write_bytes(content)
    return folder


def _form(tab):
    """What the form and the run's view show that a record restores."""
    return {
        "task": tab.task(),
        "train": tab.train_file_edit.text(),
        "evaluation": tab.eval_file_edit.text(),
        "settings": tab.hyperparameters.values(),
        "probe": tab.probe_input.probe(),
        "search": tab.search_form.search(),
        "columns": tab.column_form.mapping(),
        "choices": tab.choice_form.mapping(),
        "loss_points": tab.chart.loss_points,
        "metric_points": tab.chart.metric_points,
        "epoch_rows": tab.evaluation_model.rowCount(),
        "log": tab.log_view.toPlainText(),
        "model": tab.context.models.source,
    }


def _choose_folder(tab, qtbot, folder):
    """Points the form at `folder`; returns the exceptions Qt slots raised meanwhile."""
    checker = tab.run_controller.resume_checker
    with qtbot.captureExceptions() as exceptions:
        tab.set_output_folder(folder)
        qtbot.waitUntil(
            lambda: checker.check is not None and checker.is_current(checker.check),
            timeout=CHECK_TIMEOUT_MS,
        )
        qtbot.wait(SETTLE_MS)
    return exceptions


def test_a_record_the_app_wrote_is_restored(tab, qtbot, tmp_path, data, checkpoint):
    record = valid_record(data)
    record["search"] = {"space": "paper", "restarts": 2, "trials": None, "total_trials": 36}
    folder = _write_run_folder(tmp_path / "run", checkpoint, record)
    assert not _choose_folder(tab, qtbot, folder)
    form = _form(tab)
    assert form["train"] == str(data["long_train"]) and form["settings"]["seed"] == 7
    assert form["search"]["space"] == "paper" and form["search"]["restarts"] == 2
    assert form["loss_points"] == ((1, 0.71), (2, 0.69), (3, 0.66))
    assert "Cancel requested" in form["log"] and form["epoch_rows"] == 1
    assert RECORD_FILE not in tab.resume_note.text()


@pytest.mark.parametrize("change, words", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_hostile_record_restores_nothing_and_says_why(
    tab, qtbot, tmp_path, data, checkpoint, change, words
):
    folder = _write_run_folder(tmp_path / "run", checkpoint, change(valid_record(data)))
    before = _form(tab)
    exceptions = _choose_folder(tab, qtbot, folder)
    assert not exceptions, [str(error) for _, error, _ in exceptions][:3]
    # Nothing of it is restored: the form and the view are as they were.
    assert _form(tab) == before
    # One sentence says why, naming the file and what is wrong with it.
    note = tab.resume_note.text()
    assert not tab.resume_note.isHidden()
    assert RECORD_FILE in note and words in note, note
    # Shown as written (the note is rich text), and without the link to its setup.
    assert "<" not in note and "Use its setup" not in note


def test_a_big_record_is_shown_bounded(tab, qtbot, tmp_path, data, checkpoint):
    """Under the file's size cap, the curve is thinned and only the latest lines and
    rows are shown, without freezing the window; the rest of the form is restored."""
    record = valid_record(data)
    record["loss_points"] = [[step, 1.0 / step] for step in range(1, 60_001)]
    record["metric_points"] = [[step, 0.5] for step in range(1, 10_001)]
    record["log"] = [f"12:00:00  Step {number}" for number in range(20_000)]
    record["epoch_rows"] = [{"epoch": epoch, "loss": 0.5} for epoch in range(1, 5_001)]
    folder = _write_run_folder(tmp_path / "run", checkpoint, record)
    assert (folder / RECORD_FILE).stat().st_size <= MAX_RECORD_BYTES
    heartbeat = Heartbeat()
    heartbeat.start()
    assert not _choose_folder(tab, qtbot, folder)
    heartbeat.stop()
    assert heartbeat.max_gap_ms < FROZEN_WINDOW_MS
    loss_points = tab.chart.loss_points
    assert 0 < len(loss_points) <= MAX_CURVE_POINTS
    assert 0 < len(tab.chart.metric_points) <= MAX_CURVE_POINTS
    # The thinned curve keeps its ends, its extremes and its order.
    assert loss_points[0] == (1, 1.0) and loss_points[-1] == (60_000, 1.0 / 60_000)
    assert [step for step, _ in loss_points] == sorted({step for step, _ in loss_points})
    log = tab.log_view.toPlainText().splitlines()
    assert 0 < len(log) <= MAX_LOG_LINES and log[-1] == "12:00:00  Step 19999"
    assert 0 < tab.evaluation_model.rowCount() <= MAX_EPOCH_ROWS
    assert tab.progress_bar.format() == "Stopped after step 60000"
    assert tab.train_file_edit.text() == str(data["long_train"])


def test_what_the_app_writes_it_reads_back_bounded(tmp_path, data):
    record = valid_record(data)
    record.pop("format")
    record["loss_points"] = [(step, 0.5) for step in range(1, 100_001)]
    record["log"] = [f"{number} " + "x" * 50_000 for number in range(MAX_LOG_LINES + 10)]
    RunRecord(**record).write(tmp_path)
    assert (tmp_path / RECORD_FILE).stat().st_size <= MAX_RECORD_BYTES
    again = RunRecord.read(tmp_path)
    assert len(again.loss_points) <= MAX_CURVE_POINTS and again.loss_points[-1] == (100_000, 0.5)
    # The latest lines, each cut short.
    assert 0 < len(again.log) <= MAX_LOG_LINES and len(again.log[0]) < 50_000
    assert again.log[-1].startswith(f"{MAX_LOG_LINES + 9} x")
    assert again.settings == record["settings"]


def _answering(monkeypatch, answer):
    """QMessageBox.question answers `answer`; returns the texts it was asked."""
    asked = []

    def question(parent, title, text, *buttons):
        asked.append(f"{title} {text}")
        return answer

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


def test_use_its_setup_asks_before_switching_to_the_records_model(
    tab, qtbot, tmp_path, data, checkpoint, monkeypatch
):
    record = valid_record(data)
    record["source"] = "hf://attacker/evil-model"
    folder = _write_run_folder(tmp_path / "run", checkpoint, record)
    model = tab.context.models.source
    asked = _answering(monkeypatch, QMessageBox.StandardButton.No)
    assert not _choose_folder(tab, qtbot, folder)
    # Choosing the folder shows the run and takes its form, never its model.
    assert tab.train_file_edit.text() == str(data["long_train"])
    assert tab.context.models.source == model and not asked
    # "Use its setup" asks; "No" keeps the app's model (and takes the rest).
    tab.hyperparameters.set_values(seed=3)
    with qtbot.captureExceptions() as exceptions:
        tab.resume_note.linkActivated.emit("use-setup")
    assert not exceptions and len(asked) == 1
    assert "hf://attacker/evil-model" in asked[0]
    assert tab.context.models.source == model and tab.hyperparameters.values()["seed"] == 7


def test_use_its_setup_switches_the_model_when_the_user_says_yes(
    tab, qtbot, tmp_path, data, checkpoint, monkeypatch
):
    other = shutil.copytree(data["preset"], tmp_path / "other-model")
    record = valid_record(data)
    record["source"] = str(other)
    folder = _write_run_folder(tmp_path / "run", checkpoint, record)
    asked = _answering(monkeypatch, QMessageBox.StandardButton.Yes)
    assert not _choose_folder(tab, qtbot, folder)
    tab.resume_note.linkActivated.emit("use-setup")
    assert len(asked) == 1 and tab.context.models.source == str(other)
    checker = tab.run_controller.resume_checker
    qtbot.waitUntil(lambda: checker.check is not None, timeout=CHECK_TIMEOUT_MS)
    assert checker.check.record is not None
    # The same model as the app's: nothing to ask.
    tab.resume_note.linkActivated.emit("use-setup")
    assert len(asked) == 1
