"""A run cancelled after an epoch saved its best model: that model can be opened."""

from fine_tuning_helpers import RUN_TIMEOUT_MS
from fine_tuning_helpers import data  # noqa: F401 (a fixture)
from fine_tuning_helpers import set_up_run
from fine_tuning_helpers import tab  # noqa: F401 (a fixture)
from PySide6.QtCore import Qt

from kbert.training.progress_events import EpochFinished
from kbert_gui.tab_key import TabKey


def test_open_in_classify_and_tag_is_on_after_a_cancel_that_kept_a_best_model(
    tab, qtbot, tmp_path, data
):
    # Two epochs of 10 steps with evaluation data: the first epoch's end saves the best
    # model so far, then Cancel stops the run early in the second.
    set_up_run(
        tab, qtbot, data["long_train"], tmp_path / "run", data["evaluation"],
        epochs=2, batch_size=8, learning_rate=1e-3, max_length=16,
    )

    def cancel_after_the_first_epoch(event):
        if isinstance(event, EpochFinished) and event.epoch == 1:
            tab.cancel()

    tab.training_event.connect(cancel_after_the_first_epoch)
    with qtbot.waitSignal(tab.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(tab.start_button, Qt.MouseButton.LeftButton)
    assert tab.worker.wait(5)
    assert finished.args == ["cancelled"], tab.error_banner.message
    saved = tab.result.preset_path
    assert saved is not None and saved.is_dir()
    assert tab.open_model_button.isEnabled()
    assert tab.open_model_button.text() == f"Open in {TabKey.CLASSIFY.label}"
    assert tab.preset_label.text() == f"Best model saved before the cancel: {saved}"
    assert tab.status_label.text().endswith("Resume continues from the checkpoint.")

    with qtbot.waitSignal(tab.context.tab_requested) as requested:
        qtbot.mouseClick(tab.open_model_button, Qt.MouseButton.LeftButton)
    assert requested.args == [TabKey.CLASSIFY]
    assert tab.context.models.source == str(saved)
    # The app's model is now the run's own: the note names both models, that one by its run.
    qtbot.waitUntil(lambda: "started from the model" in tab.resume_note.text(), timeout=60_000)
    assert f"started from the model preset, not {tmp_path.name}/run." in tab.resume_note.text()
