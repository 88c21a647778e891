"""Computes an evaluation in a worker and opens its browser when it is ready."""

from PySide6.QtCore import QObject
from PySide6.QtCore import Signal

from kbert_gui.evaluation.evaluate_file_dialog import EvaluateFileDialog
from kbert_gui.evaluation.evaluation_browser import EvaluationBrowser


class EvaluationLauncher(QObject):
    """Runs `EvaluationRequest`s on the inference pool and shows each result's browser.

    The UI thread only queues the work and, when the rows come, fills a table model
    (no widget per row), so the window answers throughout.

    Signals:
        browser_opened(object): an `EvaluationBrowser` is shown.
        failed(str): an evaluation failed, in one sentence (also on the status line).

    Args:
        context: the `AppContext`.
        parent_widget: the window browsers and the dialog belong to.
    """

    browser_opened = Signal(object)
    failed = Signal(str)

    def __init__(self, context, parent_widget):
        super().__init__(parent_widget)
        self.context = context
        self._parent_widget = parent_widget
        self.browsers = []
        self.worker = None

    def ask(self):
        """Asks for a model, a labelled file and the task (File > Evaluate…), then evaluates."""
        dialog = EvaluateFileDialog(
            self.context.file_dialogs, self.context.models.source, self._parent_widget
        )
        if dialog.exec() == EvaluateFileDialog.DialogCode.Accepted:
            self.evaluate(dialog.request())

    def evaluate(self, request):
        """Queues `request` (an `EvaluationRequest`); returns its `Worker`."""
        self.context.status_message.emit(f"Evaluating {request.title}…")
        self.worker = self.context.run_inference(request.run, self.context.models)
        self.worker.signals.result.connect(lambda predictions: self._show(request, predictions))
        self.worker.signals.error.connect(self._fail)
        return self.worker

    def _show(self, request, predictions):
        if predictions is None:
            return
        browser = EvaluationBrowser(
            predictions, request.title, self.context.file_dialogs, self._parent_widget
        )
        self.browsers = [known for known in self.browsers if known.isVisible()] + [browser]
        browser.show()
        self.context.status_message.emit(f"Evaluated {request.title}.")
        self.browser_opened.emit(browser)

    def _fail(self, message):
        self.context.status_message.emit(f"Evaluation failed: {message}")
        self.failed.emit(message)
