"""The fine-tuning tab: preview and validation, a run from Start to the saved preset,
live curves, the probe, cancel and resume, continued masked-LM pretraining.

Runs on every backend with a one-layer model of hidden size 32 on a few dozen
examples, so each run takes seconds.
"""

import csv
import itertools
import json
import statistics
import time

import pytest
from fine_tuning_helpers import DATA
from fine_tuning_helpers import RUN_TIMEOUT_MS
from fine_tuning_helpers import data  # noqa: F401 (a fixture)
from fine_tuning_helpers import set_up_run
from fine_tuning_helpers import tab  # noqa: F401 (a fixture)
from fine_tuning_helpers import write_csv
from gui_helpers import FROZEN_WINDOW_MS
from gui_helpers import Heartbeat
from gui_helpers import make_context
from gui_helpers import stop_context
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QMessageBox
from fine_tuning_data import FILLER
from fine_tuning_data import classification_examples

from kbert.training.progress_events import EpochFinished
from kbert.training.progress_events import StepFinished
from kbert.training.run_state import CHECKPOINT_FILE
from kbert_gui.fine_tuning.column_mapping_form import CHOOSE_LABEL
from kbert_gui.fine_tuning.data_preview_model import DataPreviewModel
from kbert_gui.fine_tuning.data_preview_model import ERROR_BACKGROUND
from kbert_gui.fine_tuning.eta_estimator import EtaEstimator
from kbert_gui.fine_tuning.eta_estimator import format_duration
from kbert_gui.fine_tuning.evaluation_table_model import EvaluationTableModel
from kbert_gui.fine_tuning.fine_tuning_events import ProbePredicted
from kbert_gui.fine_tuning.fine_tuning_tab import FineTuningTab
from kbert_gui.fine_tuning.fine_tuning_tasks import TASKS
from kbert_gui.tab_key import TabKey
from kbert_gui.window.main_window import MainWindow


def set_up_long_run(tab, qtbot, data, output, **settings):
    """Two epochs of 10 steps, without evaluation data or probe: an epoch end only saves
    the model, so a cancel that lands there also ends quickly."""
    set_up_run(
        tab,
        qtbot,
        data["long_train"],
        output,
        epochs=2,
        batch_size=8,
        learning_rate=1e-3,
        max_length=16,
        **settings,
    )
    tab.probe_input.set_values(text="")


def set_up_short_run(tab, qtbot, data, output):
    """Two epochs of 4 steps with evaluation data and a probe."""
    set_up_run(
        tab,
        qtbot,
        data["train"],
        output,
        data["evaluation"],
        epochs=2,
        batch_size=8,
        learning_rate=1e-3,
        max_length=16,
    )
    tab.probe_input.set_values(text="a lovely cat")


def click_and_wait_for_end(tab, qtbot, button):
    with qtbot.waitSignal(tab.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert tab.worker.wait(5)
    return finished.args[0]


def events_of(events, kind):
    return [event for event in events if isinstance(event, kind)]


# --- Item models and helpers ------------------------------------------------------------


def test_item_models_pass_the_model_tester(qtmodeltester):
    preview = DataPreviewModel()
    preview.set_rows(
        ("text", "label"),
        [("a fine film", "pos"), ("dull", ""), ("x" * 400, "neg", "extra")],
        lines=[2, 3, 5],
        errors={3: "train.csv:3: empty label in column 'label'."},
    )
    qtmodeltester.check(preview)
    assert preview.error_rows() == [1]
    assert preview.data(preview.index(2, 0)).endswith("…")

    evaluation = EvaluationTableModel()
    evaluation.set_rows(
        [{"epoch": 1, "loss": 0.7, "accuracy": 0.5}, {"epoch": 2, "loss": 0.4, "accuracy": 0.9}],
        best_row=1,
    )
    qtmodeltester.check(evaluation)
    assert evaluation.keys == ("epoch", "loss", "accuracy")


def test_eta_from_step_times():
    eta = EtaEstimator()
    eta.start(total_steps=100)
    assert eta.seconds_left() is None
    for step, now in [(1, 5.0), (2, 5.5), (3, 6.0), (4, 9.0), (5, 9.5)]:
        eta.step_done(step, now)
    assert eta.seconds_per_step() == 0.5
    assert eta.seconds_left() == 95 * 0.5
    assert format_duration(3909) == "1:05:09" and format_duration(65) == "1:05"


def test_the_gui_matches_kbert_names_and_defaults(tab):
    from kbert.pretraining.pretraining_loop import CHECKPOINT_FILE as PRETRAINING_CHECKPOINT
    from kbert.finetuning import TASK_NAMES
    from kbert.finetuning import FineTuningConfig
    from kbert.finetuning.fine_tuner import CHECKPOINT_FILE as FINE_TUNING_CHECKPOINT

    assert CHECKPOINT_FILE == FINE_TUNING_CHECKPOINT == PRETRAINING_CHECKPOINT
    assert set(TASK_NAMES) <= set(TASKS)
    form = tab.hyperparameters
    assert FineTuningConfig(**form.values()) == FineTuningConfig()
    assert "peak learning rate" in form.widget("learning_rate").toolTip()
    assert form.widget("max_length").text() == "model limit"
    form.widget("learning_rate").stepUp()
    assert form.values()["learning_rate"] == 2 * FineTuningConfig().learning_rate
    # Patience needs evaluation data.
    assert not form.widget("patience").isEnabled()
    tab.set_evaluation_file("dev.csv")
    assert form.widget("patience").isEnabled()


# --- Preview and validation ---------------------------------------------------------------


def test_a_row_the_reader_rejects_is_marked_in_the_preview(tab, qtbot, tmp_path):
    path = write_csv(tmp_path / "bad.csv", classification_examples(10, seed=4), drop_label_at=2)
    tab.set_training_file(path)
    qtbot.waitUntil(lambda: "empty label" in tab.error_banner.message, timeout=20_000)
    message = tab.error_banner.message
    assert message == f"{path}:4: empty label in column 'label'."
    assert tab.column_form.mapping() == {
        "text_column": "text",
        "pair_column": None,
        "label_column": "label",
    }
    model = tab.preview_model
    assert model.rowCount() == 10 and model.columnCount() == 2
    row = model.row_of_line(4)
    assert model.error_rows() == [row]
    assert model.headerData(row, Qt.Orientation.Vertical) == "4"
    assert (
        model.data(model.index(row, 1), Qt.ItemDataRole.BackgroundRole).color() == ERROR_BACKGROUND
    )
    assert model.data(model.index(row, 0), Qt.ItemDataRole.ToolTipRole) == message
    assert model.data(model.index(0, 1), Qt.ItemDataRole.BackgroundRole) is None

    # Fixing the file and reloading clears the error.
    write_csv(path, classification_examples(10, seed=4))
    tab.set_training_file(path)
    qtbot.waitUntil(lambda: tab.preview is not None and tab.preview.ok, timeout=20_000)
    assert tab.error_banner.message == ""
    assert model.error_rows() == []
    assert tab.preview.summary == "10 examples; 2 labels: neg, pos"


def test_pair_columns_are_mapped_and_fixed_formats_show_their_examples(tab, qtbot):
    tab.set_task("pair-classification")
    tab.set_training_file(DATA / "sample_pairs.jsonl")
    qtbot.waitUntil(
        lambda: tab.preview is not None and "examples" in tab.preview.summary, timeout=20_000
    )
    assert tab.column_form.mapping() == {
        "text_column": "premise",
        "pair_column": "hypothesis",
        "label_column": "label",
    }
    assert tab.probe_input.probe() == {"text": "A man sleeps.", "pair": "A person rests."}

    tab.set_task("token-classification")
    tab.set_training_file(DATA / "sample.conll")
    qtbot.waitUntil(lambda: tab.preview is not None and tab.preview.kind == "conll", timeout=20_000)
    model = tab.preview_model
    assert model.headerData(0, Qt.Orientation.Horizontal) == "tokens"
    assert model.data(model.index(0, 0)) == "EU rejects German call ."
    assert model.data(model.index(0, 1)) == "B-ORG O B-MISC O O"
    assert "sentences" in tab.preview.summary and tab.error_banner.message == ""

    tab.set_task("qa")
    tab.set_training_file(DATA / "sample_squad_v2.json")
    qtbot.waitUntil(lambda: tab.preview is not None and tab.preview.kind == "squad", timeout=20_000)
    assert model.headerData(1, Qt.Orientation.Horizontal) == "question"
    assert tab.probe_input.probe()["question"] == model.data(model.index(0, 1))


# --- Runs -----------------------------------------------------------------------------------


def test_a_fine_tuning_run_completes_from_the_gui(tab, qtbot, tmp_path, data):
    from kbert.models import BertClassifier

    set_up_short_run(tab, qtbot, data, tmp_path / "run")
    events = []
    tab.training_event.connect(events.append)
    status = click_and_wait_for_end(tab, qtbot, tab.start_button)

    assert status == "completed", tab.error_banner.message
    result = tab.result
    assert result.status == "completed" and result.global_step == 8 and len(result.history) == 2
    # Every callback reached the chart.
    steps = events_of(events, StepFinished)
    assert [event.step for event in steps] == list(range(1, 9))
    assert [point[0] for point in tab.chart.loss_points] == list(range(1, 9))
    assert [point[1] for point in tab.chart.loss_points] == [event.loss for event in steps]
    epoch_ends = events_of(events, EpochFinished)
    assert len(tab.chart.metric_points) == len(epoch_ends) == 2
    assert [value for _, value in tab.chart.metric_points] == [
        entry["accuracy"] for entry in result.history
    ]
    # The probe was predicted at each epoch end, by the model being trained.
    probes = events_of(events, ProbePredicted)
    assert [event.epoch for event in probes] == [1, 2]
    assert all(
        event.error is None and event.result.label in ("neg", "pos") for event in probes
    )
    assert tab.probe_list.count() == 2
    assert tab.probe_list.item(1).text().startswith("Epoch 2: ")
    # The evaluation table, the log, the progress bar.
    assert tab.evaluation_model.rowCount() == 2
    assert tab.evaluation_model.best_row == result.best_epoch - 1
    log = tab.log_view.toPlainText()
    assert f"Read 32 examples from {data['train']}" in log and "Epoch 2:" in log
    assert tab.progress_bar.value() == tab.progress_bar.maximum() == 8
    assert not tab.cancel_button.isEnabled() and tab.start_button.isEnabled()

    # The curves, the evaluation table and the whole log export; the files hold what
    # the tab shows.
    _check_exports(tab, tmp_path / "exports")

    # The saved preset loads, and opens in the tab its button names: a classifier's.
    preset = tmp_path / "run" / "model"
    assert result.preset_path == preset and str(preset) in tab.preset_label.text()
    assert BertClassifier.from_preset(preset).label_names == ["neg", "pos"]
    assert tab.open_model_button.text() == "Open in Classify && tag"
    with qtbot.waitSignal(tab.context.tab_requested) as requested:
        qtbot.mouseClick(tab.open_model_button, Qt.MouseButton.LeftButton)
    assert requested.args == [TabKey.CLASSIFY]
    assert tab.context.models.source == str(preset)
    # "Predictions…": the evaluation file's rows, scored as the best epoch was.
    opened = []
    tab.evaluation.browser_opened.connect(opened.append)
    assert tab.browse_predictions_button.isEnabled()
    qtbot.mouseClick(tab.browse_predictions_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(opened), timeout=120000)
    browser = opened[0]
    qtbot.addWidget(browser)
    assert browser.rows_model.rowCount() == 16  # the evaluation file's examples
    assert browser.predictions.scores["accuracy"] == pytest.approx(
        result.history[result.best_epoch - 1]["accuracy"]
    )
    # Another task does not relabel this run's curves, whose loss says what it is.
    names = tab.chart.names()
    assert names[:2] == ("training loss (running mean of the epoch)", "evaluation accuracy")
    tab.set_task("masked-lm")
    assert tab.chart.names() == names and len(tab.chart.metric_points) == 2
    # ... but its probe outputs go, and "Open in …" is for a run of the task shown.
    assert tab.probe_list.count() == 0
    assert tab.open_model_button.text() == "Open in Masked words"
    assert not tab.open_model_button.isEnabled()


@pytest.mark.timing
def test_the_window_keeps_answering_while_a_run_trains(tab, qtbot, tmp_path, data):
    # The run of the test above, timed: the UI thread's longest gap between ticks.
    set_up_short_run(tab, qtbot, data, tmp_path / "run")
    heartbeat = Heartbeat()
    heartbeat.start()
    status = click_and_wait_for_end(tab, qtbot, tab.start_button)
    heartbeat.stop()
    assert status == "completed", tab.error_banner.message
    # Trained on the UI thread, this run would freeze the window for its whole length
    # (seconds). In a worker the gaps are the training thread's hold on the GIL:
    # 57-152 ms in benchmarks/gui_heartbeat.py, 384 ms once on a loaded 2-core CI
    # machine.
    assert heartbeat.max_gap_ms < FROZEN_WINDOW_MS


def _check_exports(tab, folder):
    folder.mkdir()
    actions = {action.label: action for action in tab.export_actions()}
    assert sorted(actions) == [
        "Evaluation table as CSV…",
        "Run log as text…",
        "Training curves as PNG…",
        "Training curves as SVG…",
    ]
    assert all(action.available() for action in actions.values())
    for action in actions.values():
        action.write(action.path_for(folder / "export"))
    assert (folder / "export.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = QImage(str(folder / "export.png"))
    assert (image.width(), image.height()) == (tab.chart.width(), tab.chart.height())
    svg = (folder / "export.svg").read_text(encoding="utf-8")
    assert "<svg" in svg and "training loss" in svg
    with open(folder / "export.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    model = tab.evaluation_model
    assert len(rows) == model.rowCount() and tuple(rows[0]) == model.keys
    for row, exported in enumerate(rows):
        for column, key in enumerate(model.keys):
            value = model.value(row, key)
            assert float(exported[key]) == pytest.approx(value, rel=1e-12)
            assert model.data(model.index(row, column)) == model.data(model.index(row, column))
    assert [int(row["epoch"]) for row in rows] == [1, 2]
    log = (folder / "export.txt").read_text(encoding="utf-8")
    assert log.splitlines() == tab.log_view.toPlainText().splitlines()


def test_cancel_stops_within_two_batches_and_resume_completes(tab, qtbot, tmp_path, data):
    output = tmp_path / "run"
    set_up_long_run(tab, qtbot, data, output)
    events, clicked_at, finished_at = [], [], []

    def cancel_at_the_first_step(event):
        events.append(event)
        if isinstance(event, StepFinished) and not clicked_at:
            assert tab.cancel_button.isEnabled() and not tab.start_button.isEnabled()
            clicked_at.append(time.perf_counter())
            qtbot.mouseClick(tab.cancel_button, Qt.MouseButton.LeftButton)

    tab.training_event.connect(cancel_at_the_first_step)
    tab.run_finished.connect(lambda status: finished_at.append(time.perf_counter()))
    status = click_and_wait_for_end(tab, qtbot, tab.start_button)
    assert status == "cancelled", tab.error_banner.message
    assert tab.worker.is_done()
    cancelled_step = tab.result.global_step
    assert tab.result.status == "cancelled" and 1 <= cancelled_step < 20
    assert (output / CHECKPOINT_FILE).is_file()
    assert tab.resume_button.isEnabled() and not tab.cancel_button.isEnabled()
    assert f"Cancelled after step {cancelled_step}" in tab.status_label.text()

    status = click_and_wait_for_end(tab, qtbot, tab.resume_button)
    assert status == "completed", tab.error_banner.message
    assert tab.result.global_step == 20 and [entry["epoch"] for entry in tab.result.history] == [
        1,
        2,
    ]
    # The resumed run continued the curve where the cancelled one stopped.
    steps = events_of(events, StepFinished)
    assert [event.step for event in steps] == list(range(1, 21))
    assert [point[0] for point in tab.chart.loss_points] == list(range(1, 21))
    assert (output / "model" / "config.json").is_file()

    # Batch time from the step events (without each run's first step, which compiles).
    intervals = [
        later.time - earlier.time
        for earlier, later in itertools.pairwise(steps)
        if earlier.step not in (1, cancelled_step)
    ]
    batch_time = statistics.median(intervals)
    assert finished_at[0] - clicked_at[0] < 2 * batch_time + 2.0, (
        finished_at[0] - clicked_at[0],
        batch_time,
    )


def test_a_missing_label_column_is_said_once_for_both_files(tab, qtbot, tmp_path):
    rows = "sentence,score\na lovely cat,1\na dull dog,0\n"
    train, evaluation = tmp_path / "train.csv", tmp_path / "evaluation.csv"
    train.write_text(rows, encoding="utf-8")
    evaluation.write_text(rows, encoding="utf-8")
    tab.set_evaluation_file(evaluation)
    tab.set_training_file(train)
    qtbot.waitUntil(lambda: bool(tab.error_banner.message), timeout=20_000)
    assert tab.error_banner.message == CHOOSE_LABEL
    qtbot.mouseClick(tab.start_button, Qt.MouseButton.LeftButton)
    assert tab.error_banner.message == CHOOSE_LABEL and tab.worker is None


def test_a_folder_that_is_not_empty_is_refused_in_the_apps_words(tab, qtbot, tmp_path, data):
    output = tmp_path / "busy"
    output.mkdir()
    (output / "notes.txt").write_text("keep me", encoding="utf-8")
    set_up_run(tab, qtbot, data["train"], output, epochs=1, batch_size=8)
    # The app refuses the folder in its own words, before any run starts.
    qtbot.mouseClick(tab.start_button, Qt.MouseButton.LeftButton)
    assert tab.worker is None
    message = tab.error_banner.message
    assert message == f"The run folder {output} is not empty: choose an empty or a new folder."
    assert "resume=" not in message and "--resume" not in message
    assert tab.start_button.isEnabled() and not tab.cancel_button.isEnabled()
    assert not tab.resume_button.isEnabled()
    assert (output / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_continued_masked_lm_pretraining_from_the_gui(tab, qtbot, tmp_path, data):
    from kbert.models import BertMaskedLM

    set_up_run(
        tab,
        qtbot,
        data["corpus"],
        tmp_path / "run",
        task="masked-lm",
        epochs=1,
        batch_size=8,
        learning_rate=1e-3,
        max_length=32,
    )
    assert tab.preview.kind == "text" and "12 documents" in tab.preview.summary
    probe = f"the {FILLER[2]} [MASK] on the mat ."
    tab.probe_input.set_values(text=probe)
    events = []
    tab.training_event.connect(events.append)
    status = click_and_wait_for_end(tab, qtbot, tab.start_button)

    assert status == "completed", tab.error_banner.message
    result = tab.result
    assert result.global_step >= 2
    assert len(tab.chart.loss_points) == len(events_of(events, StepFinished)) == result.global_step
    assert len(tab.chart.metric_points) == result.global_step
    (probe_event,) = events_of(events, ProbePredicted)
    assert probe_event.error is None and len(probe_event.result.masks) == 1
    assert tab.probe_list.item(0).text().startswith("Saved model: [MASK] → ")
    manifest = json.loads(
        (tmp_path / "run" / "pretraining-data" / "train" / "manifest.json").read_text()
    )
    assert manifest["num_instances"] > 0
    assert BertMaskedLM.from_preset(result.preset_path).tokenizer is not None


def test_esc_asks_first_and_a_restarted_app_resumes_the_run_as_it_was(
    tab, qtbot, tmp_path, data, monkeypatch
):
    output = tmp_path / "run"
    set_up_long_run(tab, qtbot, data, output, seed=7)
    window = MainWindow(tab.context, [(TabKey.FINE_TUNING, tab)])
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    answers, questions = [QMessageBox.StandardButton.No] * 2, []

    def answer(parent, title, text, *buttons):
        questions.append(title)
        return answers.pop(0) if answers else QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", answer)

    def escape_twice(event):
        if isinstance(event, StepFinished) and not questions:
            # Esc in the probe field asks; "No" keeps training.
            qtbot.keyClick(tab.probe_input.text_edit, Qt.Key.Key_Escape)
            assert questions == ["Stop training?"] and tab.cancel_button.isEnabled()
            # Ctrl+Q mid-run asks too; "No" keeps the window and the run.
            control = Qt.KeyboardModifier.ControlModifier
            qtbot.keyClick(tab.probe_input.text_edit, Qt.Key.Key_Q, control)
            assert questions[-1] == "Training is running" and window.isVisible()
            assert tab.cancel_button.isEnabled()
            # "Yes" from here on.
            qtbot.keyClick(tab.probe_input.text_edit, Qt.Key.Key_Escape)

    tab.training_event.connect(escape_twice)
    status = click_and_wait_for_end(tab, qtbot, tab.start_button)
    assert status == "cancelled" and len(questions) == 3
    assert tab.may_close() and len(questions) == 3  # nothing to ask once idle
    cancelled_step = tab.result.global_step
    losses = tab.chart.loss_points

    # The app restarts and only the run folder is chosen: the run comes back as it was,
    # its form, curves and log, and Resume is on.
    context = make_context(tmp_path / "restart-folder", str(data["preset"]))
    folder_only = FineTuningTab(context)
    qtbot.addWidget(folder_only)
    try:
        qtbot.waitUntil(lambda: folder_only.hyperparameters.is_ready, timeout=60_000)
        assert folder_only.progress_bar.format() == "No run yet"
        folder_only.set_output_folder(output)
        qtbot.waitUntil(folder_only.resume_button.isEnabled, timeout=60_000)
        assert folder_only.task() == "classification"
        assert folder_only.train_file_edit.text() == str(data["long_train"])
        assert folder_only.hyperparameters.values()["seed"] == 7
        assert folder_only.chart.loss_points == losses
        assert "— Cancel requested" in folder_only.log_view.toPlainText()
        assert folder_only.progress_bar.format() == f"Stopped after step {cancelled_step}"
        assert folder_only.status_label.text().endswith("Resume continues it.")
        # Another training file: Resume is off, one sentence says why, with the way back.
        folder_only.set_training_file(data["train"])
        qtbot.waitUntil(lambda: not folder_only.resume_note.isHidden(), timeout=60_000)
        note = folder_only.resume_note.text()
        assert not folder_only.resume_button.isEnabled()
        assert note.startswith("Resume is off: the run in this folder was trained on other data")
        assert "Use its setup" in note and "then," not in note
    finally:
        stop_context(context)

    # The app restarts: a new tab, whose form knows nothing of the run.
    context = make_context(tmp_path / "restart", str(data["preset"]))
    restarted = FineTuningTab(context)
    qtbot.addWidget(restarted)
    try:
        qtbot.waitUntil(lambda: restarted.hyperparameters.is_ready, timeout=60_000)
        restarted.set_task("qa")
        restarted.set_training_file(DATA / "sample_squad_v2.json")
        restarted.set_output_folder(output)
        qtbot.waitUntil(lambda: restarted.run_controller.resume_check is not None, timeout=60_000)
        # Another task's run: Resume is off, and one sentence says why.
        note = restarted.resume_note.text()
        assert not restarted.resume_button.isEnabled()
        assert note.startswith(
            "Resume is off: the run in this folder is text classification, not question "
            "answering (SQuAD)."
        )
        assert "config." not in note and "--resume" not in note and "{" not in note
        assert "Use its setup" in note

        # "Use its setup" puts the run's form back; then Resume continues it.
        restarted.resume_note.linkActivated.emit("use-setup")
        qtbot.waitUntil(restarted.resume_button.isEnabled, timeout=60_000)
        assert restarted.task() == "classification"
        assert restarted.train_file_edit.text() == str(data["long_train"])
        settings = restarted.hyperparameters.values()
        assert (settings["epochs"], settings["batch_size"], settings["seed"]) == (2, 8, 7)
        assert settings["learning_rate"] == pytest.approx(1e-3)
        assert restarted.resume_note.isHidden()
        # The run as it was: its curve and its log.
        restarted.resume()
        assert restarted.chart.loss_points == losses
        assert "— Cancel requested" in restarted.log_view.toPlainText()
        with qtbot.waitSignal(restarted.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
            pass
        assert finished.args == ["completed"], restarted.error_banner.message
        assert restarted.result.global_step == 20
        steps = [point[0] for point in restarted.chart.loss_points]
        assert steps == list(range(1, 21)) and cancelled_step < 20
    finally:
        stop_context(context)


def test_a_run_that_fails_in_its_own_folder_moves_the_form_to_a_fresh_one(
    tab, qtbot, tmp_path, data
):
    output = tmp_path / "pretraining"
    # An evaluation text that is not UTF-8: kbert fails on it after making the training
    # instances in the run folder.
    evaluation = tmp_path / "latin1.txt"
    evaluation.write_bytes("café au lait\n".encode("latin-1"))
    set_up_run(
        tab, qtbot, data["corpus"], output, evaluation, task="masked-lm", epochs=1, batch_size=8
    )
    status = click_and_wait_for_end(tab, qtbot, tab.start_button)
    assert status == "failed"
    assert "not valid UTF-8" in tab.error_banner.message
    assert any(output.iterdir()) and not (output / CHECKPOINT_FILE).exists()
    # The next Start is not refused: the form moved on, the failed run's files stay.
    fresh = tmp_path / "pretraining-2"
    assert tab.output_edit.text() == str(fresh) and not fresh.exists()
    assert f"The next run uses {fresh}" in tab.status_label.text()
    assert not tab.resume_button.isEnabled()
