"""The fine-tuning form beside a run folder that holds a finished run: what the user
chooses afterwards stays, one line says what Start will do, and Start does it."""

from fine_tuning_helpers import DATA
from fine_tuning_helpers import RUN_TIMEOUT_MS
from fine_tuning_helpers import data  # noqa: F401 (a fixture)
from fine_tuning_helpers import set_up_run
from fine_tuning_helpers import tab  # noqa: F401 (a fixture)
from PySide6.QtCore import Qt

CHECK_TIMEOUT_MS = 60_000


def run_to_the_end(tab, qtbot):
    with qtbot.waitSignal(tab.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(tab.start_button, Qt.MouseButton.LeftButton)
    assert tab.worker.wait(5)
    return finished.args[0]


def wait_for_the_folders_record(tab, qtbot):
    """Waits until the run folder's check (made in a worker) is back with its record."""

    def checked():
        check = tab.run_controller.resume_check
        return check is not None and check.record is not None

    qtbot.waitUntil(checked, timeout=CHECK_TIMEOUT_MS)


def test_a_finished_runs_folder_keeps_the_users_new_task_and_start_begins_beside_it(
    tab, qtbot, tmp_path, data, monkeypatch
):
    output = tmp_path / "run"
    set_up_run(tab, qtbot, data["train"], output, epochs=1, batch_size=8, max_length=16)
    assert run_to_the_end(tab, qtbot) == "completed", tab.error_banner.message
    assert tab.output_edit.text() == str(output)

    # Clearing the training file leaves it cleared (the run's file does not come back).
    tab.set_training_file("")
    wait_for_the_folders_record(tab, qtbot)
    assert tab.train_file_edit.text() == "" and tab.task() == "classification"

    # Another task stays chosen, with no file, and one line says what Start will do.
    tab.set_task("qa")
    wait_for_the_folders_record(tab, qtbot)
    assert tab.task() == "qa" and tab.train_file_edit.text() == ""
    tab.set_training_file(DATA / "sample_squad_v2.json")
    qtbot.waitUntil(lambda: tab.preview is not None, timeout=CHECK_TIMEOUT_MS)
    wait_for_the_folders_record(tab, qtbot)
    assert tab.task() == "qa"
    assert tab.train_file_edit.text() == str(DATA / "sample_squad_v2.json")
    beside = tmp_path / "run-2"
    note = tab.resume_note.text()
    assert note.startswith("Resume is off: the run in this folder is text classification")
    assert f"Start begins a new run in {beside}." in note
    assert not tab.resume_note.isHidden() and not tab.resume_button.isEnabled()

    # Start does what the line says: the new run goes beside the old one's folder.
    submitted = []
    monkeypatch.setattr(tab.run_controller, "_submit", submitted.append)
    qtbot.mouseClick(tab.start_button, Qt.MouseButton.LeftButton)
    assert tab.error_banner.message == ""
    (job,) = submitted
    assert job.task_name == "qa" and job.output_dir == beside
    assert tab.output_edit.text() == str(beside)
