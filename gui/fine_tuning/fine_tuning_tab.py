"""The fine-tuning tab: data, settings, a live view of the run, and its result."""

from PySide6.QtCore import Signal

from kbert_gui.evaluation.evaluation_launcher import EvaluationLauncher
from kbert_gui.fine_tuning.fine_tuning_panel import FineTuningPanel
from kbert_gui.fine_tuning.fine_tuning_run_controller import FineTuningRunController
from kbert_gui.fine_tuning.fine_tuning_setup_controller import FineTuningSetupController
from kbert_gui.services.evaluation_request import EvaluationRequest


class FineTuningTab(FineTuningPanel):
    """Point-and-click fine-tuning of the current model.

    Left, the setup: the task, the training (and optional evaluation) file, the column
    mapping of table files, the hyperparameters (kbert's `FineTuningConfig`, with its
    defaults and documentation) and the output folder. Right, three pages: the data
    preview (first 200 rows, rows the reader rejects in red), the training view
    (progress with ETA, live loss and metric curves, the probe and its prediction at
    every epoch, the evaluation table, the saved preset with one click to open it in
    the tab that uses it: "Open in Classify & tag", "Open in Question answering" or
    "Open in Masked words"; "Predictions…" shows every example of the evaluation
    file beside the saved model's prediction), and the log.

    The run is a `FineTuningJob` on the context's training pool. Cancel stops it after
    the current batch with a checkpoint; Resume continues a run whose output folder
    holds one. The widgets are the `FineTuningPanel`'s; `setup_controller` (a
    `FineTuningSetupController`) and `run_controller` (a `FineTuningRunController`,
    with its `FineTuningRunView`) hold the state and do the work.

    Signals:
        training_event(object): every progress event of the running job (see
            `FineTuningJob`), after the tab has shown it.
        run_finished(str): the run ended: "completed", "stopped_early", "cancelled"
            or "failed".
        preview_loaded(): a data preview (and its validation) is shown.

    Args:
        context: the `AppContext`.
        parent: the parent widget.
    """

    training_event = Signal(object)
    run_finished = Signal(str)
    preview_loaded = Signal()

    def __init__(self, context, parent=None):
        super().__init__(parent)
        self.context = context
        self.setup_controller = FineTuningSetupController(self, context)
        self.run_controller = FineTuningRunController(self, context, self.setup_controller)
        self.setup_controller.preview_loaded.connect(self.preview_loaded)
        self.run_controller.training_event.connect(self.training_event)
        self.run_controller.run_finished.connect(self.run_finished)
        self.evaluation = EvaluationLauncher(context, self)
        self.browse_predictions_button.clicked.connect(self.browse_predictions)
        self.run_controller.run_finished.connect(self._update_browse_button)
        for button in (self.start_button, self.resume_button):
            button.clicked.connect(lambda: self.browse_predictions_button.setEnabled(False))

    @property
    def worker(self):
        """The `Worker` of the latest run, or None before the first."""
        return self.run_controller.worker

    @property
    def result(self):
        """The latest run's `FineTuningResult` or `PretrainingResult`, once it has one."""
        return self.run_controller.result

    @property
    def preview(self):
        """The training file's `TrainingDataPreview`, or None while it loads."""
        return self.setup_controller.preview

    def task(self):
        """The chosen task name ("classification", ..., "masked-lm")."""
        return self.setup_controller.task()

    def set_task(self, task_name):
        """Chooses the task by name."""
        self.setup_controller.set_task(task_name)

    def set_output_folder(self, folder):
        """Sets the run folder (as if typed)."""
        self.setup_controller.set_output_folder(folder)

    def set_training_file(self, path):
        """Sets the training file and loads its preview."""
        self.setup_controller.set_training_file(path)

    def set_evaluation_file(self, path):
        """Sets the evaluation file (None or "" for none)."""
        self.setup_controller.set_evaluation_file(path)

    def start(self):
        """Starts a new run with the current setup."""
        self.run_controller.start()

    def resume(self):
        """Continues the run in the output folder from its checkpoint."""
        self.run_controller.resume()

    def cancel(self):
        """Asks the run to stop after the current batch (it writes a checkpoint)."""
        self.run_controller.cancel()

    def export_actions(self):
        """What File > Export offers here: the curves (PNG, SVG), the evaluation table
        (CSV) and the run's whole log (text)."""
        return self.run_controller.export_actions()

    def may_close(self):
        """Whether the window may close now: asks first while a run is in progress."""
        return self.run_controller.may_close()

    def has_checkpoint(self):
        """Whether the output folder holds a training checkpoint to resume from."""
        return self.run_controller.has_checkpoint()

    def open_saved_model(self):
        """Makes the saved model the app's model and shows the tab that uses it."""
        self.run_controller.open_saved_model()

    def predictions_request(self):
        """The `EvaluationRequest` of the finished run's saved model on its evaluation
        file with the run's columns and max length, or None when there is none (no
        evaluation file, no saved model)."""
        result, job = self.run_controller.result, self.run_controller.job
        if result is None or job is None or job.evaluation_path is None:
            return None
        if job.task_name == "masked-lm" or getattr(result, "preset_path", None) is None:
            return None
        return EvaluationRequest(
            str(result.preset_path),
            job.task_name,
            job.evaluation_path,
            tuple(sorted(job.columns.items())),
            job.settings.get("max_length"),
        )

    def browse_predictions(self):
        """Evaluates the saved model on the evaluation file and opens the browser."""
        request = self.predictions_request()
        if request is not None:
            self.evaluation.evaluate(request)

    def _update_browse_button(self, status):
        self.browse_predictions_button.setEnabled(self.predictions_request() is not None)
