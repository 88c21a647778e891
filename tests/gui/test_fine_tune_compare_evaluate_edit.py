"""The app's whole flow in one test: fine-tune a tiny classifier, find its run in the Runs
view (File ▸ Compare runs…), evaluate its model on a labelled file, then edit an example in
the evaluation browser and predict it again in place."""

import pytest
from fine_tuning_helpers import data  # noqa: F401 (a fixture)
from fine_tuning_helpers import open_window
from fine_tuning_helpers import RUN_TIMEOUT_MS
from fine_tuning_helpers import set_up_run
from gui_helpers import stop_context
from PySide6.QtCore import Qt

from kbert_gui.services.evaluation_request import EvaluationRequest
from kbert_gui.tab_key import TabKey


# The offscreen platform cannot raise a window (the Runs view raises itself when it opens).
@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_fine_tune_then_compare_runs_then_evaluate_then_edit_and_predict_again(
    qtbot, tmp_path, data  # noqa: F811 (the fixture)
):
    window = open_window(qtbot, tmp_path, data["preset"])
    try:
        tuning = window.tab(TabKey.FINE_TUNING)
        output = tmp_path / "runs" / "sentiment"
        set_up_run(
            tuning, qtbot, data["train"], output, data["evaluation"],
            epochs=1, batch_size=8, learning_rate=1e-3, max_length=16,
        )
        with qtbot.waitSignal(tuning.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
            qtbot.mouseClick(tuning.start_button, Qt.MouseButton.LeftButton)
        assert finished.args == ["completed"], tuning.error_banner.message
        model_path = tuning.result.preset_path

        runs = window.runs.show_runs()
        qtbot.waitUntil(lambda: runs.model.rowCount() == 1, timeout=20_000)
        runs.table.selectRow(0)
        (run,) = runs.selected_runs()
        assert run.task == "classification" and run.model_path is not None
        assert len(run.curve()) == 1  # one epoch, one evaluation score
        runs.close()

        opened = []
        window.evaluation.browser_opened.connect(opened.append)
        request = EvaluationRequest(str(model_path), "classification", str(data["evaluation"]))
        window.evaluation.evaluate(request)
        qtbot.waitUntil(lambda: bool(opened), timeout=RUN_TIMEOUT_MS)
        browser = opened[0]
        qtbot.addWidget(browser)
        browser.table.setCurrentIndex(browser.filter_model.index(0, 0))
        editor = browser.tools.editor
        position = editor.position
        editor.text_edit.setPlainText("a lovely lovely cat")
        editor.predict_button.click()
        qtbot.waitUntil(
            lambda: "edited" in browser.rows_model.records[position], timeout=RUN_TIMEOUT_MS
        )
        edited = browser.rows_model.records[position]
        assert edited["text"] == "a lovely lovely cat"
        assert edited["predicted"] in browser.predictions.label_names
        assert "background-color" in editor.saliency_label.text()
        runs.pool.wait_for_done(10_000)
    finally:
        stop_context(window.context)
