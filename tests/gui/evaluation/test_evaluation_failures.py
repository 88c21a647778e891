"""File ▸ Evaluate… on a model without the task's head: one sentence in the app's words,
in the window's banner, until the user dismisses it."""

from fine_tuning_helpers import data  # noqa: F401 (a fixture)
from gui_helpers import make_context
from gui_helpers import stop_context
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from kbert_gui.services.evaluation_request import EvaluationRequest
from kbert_gui.window.main_window import MainWindow

TIMEOUT_MS = 120_000


def test_evaluating_a_model_without_the_head_says_so_until_dismissed(qtbot, tmp_path, data):
    context = make_context(tmp_path, str(data["preset"]))
    label = QLabel("first")
    label.setWindowTitle("First")
    # The window describes its model first (a description clears the banner).
    with qtbot.waitSignal(context.opener.described, timeout=TIMEOUT_MS):
        window = MainWindow(context, [("first", label)])
    qtbot.addWidget(window)
    window.show()
    request = EvaluationRequest(str(data["preset"]), "classification", str(data["evaluation"]))
    try:
        with qtbot.waitSignal(window.evaluation.failed, timeout=TIMEOUT_MS):
            window.evaluation.evaluate(request)
        message = window.error_banner.message
        assert message == (
            "Evaluation failed: preset (encoder only) has no text classification head, so it "
            "cannot be evaluated on evaluation.csv: fine-tune it for text classification in "
            "the Fine-tuning tab and evaluate the model the run saves, or open a model "
            "fine-tuned for it (File ▸ Open model…)."
        )
        assert "kbert finetune" not in message and "\n" not in message
        # It stays (the status line let go of it within seconds) until dismissed.
        qtbot.wait(200)
        assert window.error_banner.isVisible() and window.error_banner.message == message
        qtbot.mouseClick(window.error_banner.close_button, Qt.MouseButton.LeftButton)
        assert not window.error_banner.isVisible()
    finally:
        stop_context(context)
