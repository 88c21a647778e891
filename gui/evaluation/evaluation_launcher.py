"""Computes an evaluation in a worker and opens its browser when it is ready."""

import dataclasses
import pathlib

from PySide6.QtCore import QObject
from PySide6.QtCore import Signal

from kbert_gui.evaluation.compared_predictions import compare_predictions
from kbert_gui.evaluation.evaluate_file_dialog import EvaluateFileDialog
from kbert_gui.evaluation.evaluation_browser import EvaluationBrowser
from kbert_gui.services.model_description import short_name
from kbert_gui.services.worker import Worker


class EvaluationLauncher(QObject):
    """Runs `EvaluationRequest`s on the inference pool and shows each result's browser.

    The UI thread only queues the work and, when the rows come, fills a table model
    (no widget per row), so the window answers throughout. A model without the task's
    head is refused first, in the app's words (what to fine-tune or open instead).

    Signals:
        browser_opened(object): an `EvaluationBrowser` is shown.
        failed(str): an evaluation failed, in one sentence (the window shows it until
            dismissed).

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
        if dialog.exec() != EvaluateFileDialog.DialogCode.Accepted:
            return
        if dialog.other_source():
            self.compare(dialog.request(), dialog.other_source())
        else:
            self.evaluate(dialog.request())

    def evaluate(self, request):
        """Queues `request` (an `EvaluationRequest`); returns its `Worker`."""
        self.context.status_message.emit(f"Evaluating {request.title}…")
        # Connected before it starts: a refusal can come back before this line returns.
        worker = Worker(_evaluate, request, self.context.models)
        worker.signals.result.connect(lambda predictions: self._show(request, predictions))
        worker.signals.error.connect(self._fail)
        self.worker = self.context.inference_pool.start(worker)
        return self.worker

    def compare(self, request, other_source):
        """Evaluates `request` (an `EvaluationRequest`) and the same file with the model
        `other_source`, then shows one browser with both predictions per row."""
        other = dataclasses.replace(request, source=str(other_source))
        title = f"{request.title} vs {short_name(other.source)}"
        self.context.status_message.emit(f"Evaluating {title}…")
        worker = Worker(_compare, request, other, self.context.models)
        worker.signals.result.connect(
            lambda predictions: self._show(request, predictions, title, other.source)
        )
        worker.signals.error.connect(self._fail)
        self.worker = self.context.inference_pool.start(worker)
        return self.worker

    def _show(self, request, predictions, title=None, other_source=None):
        if predictions is None:
            return
        from kbert.finetuning.task_specs import task_spec

        access = (
            self.context.inference_pool,
            self.context.models,
            request.source,
            task_spec(request.task).head,
            other_source,
        )
        browser = EvaluationBrowser(
            predictions,
            title or request.title,
            self.context.file_dialogs,
            self._parent_widget,
            model_access=access,
        )
        self.browsers = [known for known in self.browsers if known.isVisible()] + [browser]
        browser.show()
        self.context.status_message.emit(f"Evaluated {request.title}.")
        self.browser_opened.emit(browser)

    def _fail(self, message):
        self.context.status_message.emit(f"Evaluation failed: {message}")
        self.failed.emit(message)


def _evaluate(worker, request, models):
    """Worker: the request's `EvaluationPredictions`, after checking the model's head."""
    from kbert.finetuning.task_specs import task_spec

    spec = task_spec(request.task)
    if not spec.runs_pretraining:
        description = models.describe(request.source)
        if description.class_name != spec.head:
            raise ValueError(missing_head_message(description, spec.title, request.data_path))
    return request.run(worker, models)


def _compare(worker, request, other, models):
    """Worker: both models' predictions on the request's file, row by row."""
    first = _evaluate(worker, request, models)
    second = None if first is None else _evaluate(worker, other, models)
    return None if second is None else compare_predictions(first, second)


def missing_head_message(description, task_title, data_path):
    """Why a model (its `ModelDescription`) without the task's head cannot be evaluated,
    and what to do instead, in one sentence."""
    task = task_title[0].lower() + task_title[1:]
    return (
        f"{short_name(description.source)} ({description.kind}) has no {task} head, so it "
        f"cannot be evaluated on {pathlib.Path(data_path).name}: fine-tune it for {task} "
        "in the Fine-tuning tab and evaluate the model the run saves, or open a model "
        "fine-tuned for it (File ▸ Open model…)."
    )
