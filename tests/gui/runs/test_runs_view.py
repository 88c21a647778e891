"""Runs compared: a folder's fine-tuning runs listed with their facts, the selected runs'
curves on one chart, and a run's setup or model taken from there."""

import json

import pytest
from gui_helpers import make_context
from gui_helpers import stop_context
from PySide6.QtCore import Qt

from kbert_gui.fine_tuning.run_record import RECORD_FILE
from kbert_gui.fine_tuning.run_record import RunRecord
from kbert_gui.runs.run_summary import find_runs
from kbert_gui.runs.runs_table_model import COLUMNS
from kbert_gui.runs.runs_view import RunsView
from kbert_gui.tab_key import TabKey

SETTINGS = {"epochs": 2, "batch_size": 8, "learning_rate": 0.001}
ROWS = ({"epoch": 1, "loss": 0.7, "accuracy": 0.5}, {"epoch": 2, "loss": 0.4, "accuracy": 0.75})


def _model(folder, **fine_tuning):
    (folder / "model").mkdir(parents=True)
    (folder / "model" / "metadata.json").write_text(json.dumps({"fine_tuning": fine_tuning}))


def _record(folder, rows=ROWS):
    return RunRecord(
        task="classification", source="/home/me/presets/tiny", train="/data/sst2/train.csv",
        evaluation="/data/sst2/dev.csv", columns=None, settings=dict(SETTINGS), probe=None,
        curve_names=("training loss", "evaluation accuracy", True),
        loss_points=((1, 0.7), (2, 0.4)), metric_points=((1, 0.5), (2, 0.75)),
        epoch_rows=rows, log=("started",),
    ).write(folder)


@pytest.fixture
def runs_folder(tmp_path):
    root = tmp_path / "runs"
    _record(root / "app")
    _model(root / "app", task="classification", epoch=2, accuracy=0.75)
    _model(root / "cli", task="classification", epoch=1, accuracy=0.8)
    search = root / "group" / "search"
    search.mkdir(parents=True)
    trials = [{"trial": 0, "accuracy": 0.5}, {"trial": 1, "accuracy": 0.625}]
    table = {"metric": "accuracy", "total_trials": 4, "trials": trials}
    (search / "search_trials.json").write_text(json.dumps(table))
    (search / "trial-000").mkdir()  # inside the search: not a run of its own
    _model(search / "trial-000", task="classification", epoch=1, accuracy=0.5)
    (root / "started").mkdir()
    (root / "started" / "training_checkpoint.h5").write_bytes(b"")
    (root / "hostile").mkdir()
    (root / "hostile" / RECORD_FILE).write_text("[1, 2")
    (root / "not a run").mkdir()
    return root


def _cells(run, model):
    row = model.runs().index(run)
    return {title: model.index(row, column).data() for column, title in enumerate(COLUMNS)}


def test_every_run_is_listed_with_its_facts(qtbot, runs_folder):
    from kbert_gui.runs.runs_table_model import RunsTableModel

    runs = find_runs(runs_folder)
    assert [run.name for run in runs] == ["app", "cli", "group/search", "hostile", "started"]
    model = RunsTableModel()
    model.set_runs(runs)
    app, cli, search, hostile, started = (_cells(run, model) for run in runs)
    assert app["Task"] == "classification" and app["Model"] == "tiny"
    assert app["Data"] == "train.csv"
    assert app["Settings"] == "epochs 2 · batch size 8 · learning rate 0.001"
    assert app["Best score"] == "accuracy 75.0 % (epoch 2)"
    assert app["Status"] == "model saved"
    assert cli["Best score"] == "accuracy 80.0 % (epoch 1)" and cli["Model"] == "–"
    assert search["Best score"] == "–"  # its task is unknown without the app's record
    assert search["Status"] == "search: 2 of 4 trials finished"
    assert started["Status"].startswith("checkpoint only")
    assert "is not used" in runs[3].problem
    tooltip = model.index(3, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "is not used" in tooltip
    assert runs[0].curve() == ((1, 50.0), (2, 75.0)) and runs[1].curve() == ()


@pytest.fixture
def view(qtbot, tmp_path):
    context = make_context(tmp_path)
    widget = RunsView(context)
    qtbot.addWidget(widget)
    widget.resize(1000, 640)
    widget.show()
    yield widget
    widget.pool.wait_for_done(10_000)
    stop_context(context)


def _load(qtbot, view, folder):
    with qtbot.waitSignal(view.loaded, timeout=20_000):
        view.load(folder)


def test_the_selected_runs_share_one_chart(qtbot, view, runs_folder):
    _load(qtbot, view, runs_folder)
    assert view.model.rowCount() == 5
    assert view.summary.text().startswith("5 runs in ")
    view.table.selectAll()
    names = [name for name, _ in view.chart.curves]
    assert names == ["app", "cli", "group/search", "hostile", "started"]
    assert dict(view.chart.curves)["app"] == ((1, 50.0), (2, 75.0))
    assert view.chart.y_title == "accuracy (%)"
    assert not view.setup_button.isEnabled() and not view.open_button.isEnabled()


def test_a_runs_setup_and_model_are_taken_from_the_list(qtbot, view, runs_folder, monkeypatch):
    _load(qtbot, view, runs_folder)
    view.table.selectRow(0)
    assert view.setup_button.isEnabled() and view.open_button.isEnabled()
    with qtbot.waitSignal(view.setup_chosen) as chosen:
        qtbot.mouseClick(view.setup_button, Qt.MouseButton.LeftButton)
    assert chosen.args[0].settings == SETTINGS and chosen.args[0].task == "classification"
    opened = []
    monkeypatch.setattr(view.context, "open_model", lambda *args: opened.append(args))
    qtbot.mouseClick(view.open_button, Qt.MouseButton.LeftButton)
    assert opened == [(str(runs_folder / "app" / "model"), TabKey.CLASSIFY)]
    view.table.selectRow(4)  # a checkpoint only: nothing to open, no record
    assert not view.setup_button.isEnabled() and not view.open_button.isEnabled()


def test_an_empty_folder_says_so(qtbot, view, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    _load(qtbot, view, empty)
    assert view.summary.text() == f"No runs in {empty}."
    assert view.chart.curves == []


@pytest.mark.slow
def test_a_run_made_by_the_command_line_has_its_settings_and_curve(tmp_path):
    """`kbert finetune` writes no app record: the Runs view reads its training
    checkpoint for the task, the model, the settings and each epoch's score."""
    from fine_tuning_data import classification_examples
    from fine_tuning_data import make_tiny_preset
    from fine_tuning_helpers import SMALL_MODEL
    from fine_tuning_helpers import write_csv

    from kbert.cli import main

    preset = make_tiny_preset(tmp_path / "preset", **SMALL_MODEL)
    write_csv(tmp_path / "train.csv", classification_examples(16, seed=1))
    write_csv(tmp_path / "dev.csv", classification_examples(8, seed=2))
    output = tmp_path / "runs" / "cli"
    assert main([
        "finetune", "--task", "classification", "--model", str(preset),
        "--train", str(tmp_path / "train.csv"), "--eval", str(tmp_path / "dev.csv"),
        "--output", str(output), "--epochs", "2", "--batch-size", "8",
    ]) == 0
    (run,) = find_runs(tmp_path / "runs")
    assert (run.task, run.source, run.problem) == ("classification", str(preset), "")
    assert run.settings["epochs"] == 2 and run.settings["batch_size"] == 8
    assert [epoch for epoch, _ in run.curve()] == [1, 2]
    assert all(0 <= score <= 100 for _, score in run.curve())
    assert run.curve()[-1][1] == pytest.approx(100 * run.history[-1]["accuracy"])
