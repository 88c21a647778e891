"""The fine-tuning tab's run: Start, Resume and Cancel, the live view, the result."""

import datetime
import pathlib

from PySide6.QtCore import QObject
from PySide6.QtCore import Signal
from PySide6.QtCore import Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QListWidgetItem

from kbert.tasks.task_specs import TASK_SPECS
from kbert.training.progress_events import EpochFinished
from kbert.training.progress_events import StepFinished
from kbert.training.progress_events import TrainingFinished
from kbert.training.progress_events import TrainingStarted
from kbert.training.run_state import CHECKPOINT_FILE
from kbert_gui.eta_estimator import EtaEstimator
from kbert_gui.fine_tuning_events import LogLine
from kbert_gui.fine_tuning_events import ProbePredicted
from kbert_gui.fine_tuning_format import cancelled_line
from kbert_gui.fine_tuning_format import epoch_line
from kbert_gui.fine_tuning_format import eta_text
from kbert_gui.fine_tuning_format import log_line
from kbert_gui.fine_tuning_format import probe_line
from kbert_gui.fine_tuning_format import result_summary
from kbert_gui.fine_tuning_format import result_table
from kbert_gui.fine_tuning_format import start_line
from kbert_gui.fine_tuning_format import status_heading
from kbert_gui.fine_tuning_job import FineTuningJob
from kbert_gui.fine_tuning_tasks import TASKS
from kbert_gui.training_data_preview import DATA_KINDS



class FineTuningRunController(QObject):
    """The state machine of a fine-tuning run, shown on a `FineTuningPanel`.

    A run is idle, running or cancelling. Start and Resume submit a `FineTuningJob`
    built from the setup to the context's training pool, Cancel asks it to stop after
    the current batch, and the worker's result, error or cancellation says how the run
    ended. Every progress event of the job passes `_on_event`, the one place that
    reads them, on its way to the progress bar, the curves, the probe list, the
    evaluation table and the log.

    Signals:
        training_event(object): every progress event of the running job (see
            `FineTuningJob`), after the panel has shown it.
        run_finished(str): the run ended: "completed", "stopped_early", "cancelled"
            or "failed".

    Args:
        panel: the `FineTuningPanel` (also the parent).
        context: the `AppContext`.
        setup: the `FineTuningSetupController` of the same panel.
    """

    training_event = Signal(object)
    run_finished = Signal(str)

    def __init__(self, panel, context, setup):
        super().__init__(panel)
        self.panel = panel
        self.context = context
        self.setup = setup
        self.worker = None
        self.job = None
        self.result = None
        self._running = False
        self._cancelling = False
        self._finished_status = None
        self._last_run = None
        self._epoch_rows = []
        self._eta = EtaEstimator()

        panel.output_edit.textChanged.connect(self._update_buttons)
        panel.start_button.clicked.connect(self.start)
        panel.resume_button.clicked.connect(self.resume)
        panel.cancel_button.clicked.connect(self.cancel)
        panel.probe_input.probe_changed.connect(self._probe_changed)
        panel.open_explorer_button.clicked.connect(self.open_in_explorer)
        panel.open_qa_button.clicked.connect(self.open_in_question_answering)
        setup.hyperparameters_ready.connect(self._update_buttons)
        self._update_buttons()

    @Slot()
    def start(self):
        """Starts a new run with the current setup."""
        self._start(resume=False)

    @Slot()
    def resume(self):
        """Continues the run in the output folder from its checkpoint."""
        self._start(resume=True)

    def _start(self, resume):
        if self._running:
            return
        panel = self.panel
        panel.error_banner.clear_error()
        train = panel.train_file_edit.text().strip()
        output = panel.output_edit.text().strip()
        task = self.setup.task()
        problem = None
        if not panel.hyperparameters.is_ready:
            problem = "The hyperparameters are still loading."
        elif not train:
            problem = "Choose a training file."
        elif not output:
            problem = "Choose a run folder."
        elif DATA_KINDS[task] == "table" and panel.column_form.mapping() is None:
            problem = "The training file's columns are not known yet."
        if problem:
            panel.error_banner.show_error(problem)
            return
        settings = panel.hyperparameters.values()
        if not panel.hyperparameters.widget("patience").isEnabled():
            settings["patience"] = None
        self.job = FineTuningJob(
            task,
            self.context.models.source,
            output,
            train,
            panel.eval_file_edit.text().strip() or None,
            columns=panel.column_form.mapping() if DATA_KINDS[task] == "table" else None,
            settings=settings,
            probe=panel.probe_input.probe(),
            resume=resume,
            preset_folder=self.context.models.preset_folder,
        )
        run = (task, str(pathlib.Path(output).expanduser()))
        if not (resume and self._last_run == run):
            panel.chart.clear()
            panel.probe_list.clear()
            self._epoch_rows = []
        self._last_run = run
        self.result = None
        panel.evaluation_model.set_rows(self._epoch_rows)
        panel.preset_label.clear()
        panel.progress_bar.setRange(0, 0)
        panel.eta_label.setText("")
        panel.status_label.setText("Resuming…" if resume else "Loading the model and the data…")
        panel.open_explorer_button.setEnabled(False)
        panel.open_qa_button.setEnabled(False)
        self._append_log(start_line(TASKS[task][0], output, resume))
        self._set_running(True)
        panel.pages.setCurrentIndex(1)

        worker = self.context.run_training(self.job)
        worker.signals.progress.connect(self._on_event)
        worker.signals.result.connect(self._on_result)
        worker.signals.error.connect(self._on_error)
        worker.signals.cancelled.connect(self._on_cancelled)
        worker.signals.finished.connect(self._on_finished)
        self.worker = worker

    @Slot()
    def cancel(self):
        """Asks the run to stop after the current batch (it writes a checkpoint)."""
        if not self._running or self._cancelling:
            return
        self._cancelling = True
        self.worker.cancel()
        self.panel.status_label.setText("Cancelling after the current batch…")
        self._append_log("— Cancel requested")
        self._update_buttons()

    def _set_running(self, running):
        self._running = running
        self._cancelling = False
        self.setup.set_locked(running)
        self._update_buttons()

    @Slot()
    def _update_buttons(self):
        ready = self.panel.hyperparameters.is_ready and not self._running
        self.panel.start_button.setEnabled(ready)
        self.panel.resume_button.setEnabled(ready and self.has_checkpoint())
        self.panel.cancel_button.setEnabled(self._running and not self._cancelling)

    def has_checkpoint(self):
        """Whether the output folder holds a training checkpoint to resume from."""
        output = self.panel.output_edit.text().strip()
        return bool(output) and (pathlib.Path(output).expanduser() / CHECKPOINT_FILE).is_file()

    def _probe_changed(self):
        if self._running and self.job is not None:
            self.job.set_probe(self.panel.probe_input.probe())

    # --- Progress (UI thread, from the worker's signals) ----------------------------------

    @Slot(object)
    def _on_event(self, event):
        # The one place that reads the job's events (typed: see `FineTuningJob`).
        if isinstance(event, StepFinished):
            self._show_step(
                event.step,
                event.time,
                loss=event.loss,
                metric=event.logs.get("mlm_accuracy"),
                epoch=event.epoch,
            )
        elif isinstance(event, EpochFinished):
            metric = TASK_SPECS[self.job.task_name].metric
            self._show_epoch(event.epoch, event.step, event.logs, metric, event.logs.get(metric))
        elif isinstance(event, ProbePredicted):
            self._show_probe(event.epoch, event.result, event.error)
        elif isinstance(event, LogLine):
            self._append_log(log_line(event.message, event.level))
        elif isinstance(event, TrainingStarted):
            self._show_train_begin(event.total_steps)
        elif isinstance(event, TrainingFinished):
            self.result = event.result
        self.training_event.emit(event)

    def _show_train_begin(self, total_steps):
        total = max(int(total_steps), 1)
        self.panel.progress_bar.setRange(0, total)
        self.panel.progress_bar.setFormat("%v / %m steps")
        self.panel.chart.set_total_steps(total)
        self._eta.start(total)
        self.panel.status_label.setText("Training…")

    def _show_step(self, step, finished_at, loss, metric, epoch):
        panel = self.panel
        panel.progress_bar.setValue(min(step, panel.progress_bar.maximum()))
        self._eta.step_done(step, finished_at)
        left = self._eta.seconds_left()
        if left is not None:
            panel.eta_label.setText(eta_text(left, self._eta.seconds_per_step()))
        if loss is not None:
            panel.chart.add_loss_point(step, loss)
        if metric is not None:
            panel.chart.add_metric_point(step, metric)
        if epoch is not None and not self._cancelling:
            panel.status_label.setText(f"Training: epoch {epoch}, step {step}")

    def _show_epoch(self, epoch, step, logs, metric, value):
        if value is not None:
            self.panel.chart.set_names("training loss", f"evaluation {metric.replace('_', ' ')}")
            self.panel.chart.add_metric_point(step, value)
        self._epoch_rows = [row for row in self._epoch_rows if row.get("epoch") != epoch]
        self._epoch_rows.append(dict(logs))
        self.panel.evaluation_model.set_rows(self._epoch_rows)
        self._append_log(epoch_line(epoch, logs))

    def _show_probe(self, epoch, result, error):
        line, tooltip = probe_line(epoch, result, error)
        item = QListWidgetItem(line)
        item.setToolTip(tooltip)
        if error:
            item.setForeground(QColor("#8a1c1c"))
        self.panel.probe_list.addItem(item)
        self.panel.probe_list.scrollToBottom()

    def _append_log(self, message):
        stamp = datetime.datetime.now().strftime("%H:%M:%S")
        self.panel.log_view.appendPlainText(f"{stamp}  {message}")

    # --- How the run ended -------------------------------------------------------------

    @Slot(object)
    def _on_result(self, result):
        panel = self.panel
        self.result = result
        preset = result.preset_path
        panel.evaluation_model.set_rows(*result_table(result))
        heading, summary = status_heading(result.status), result_summary(result)
        panel.status_label.setText(f"{heading}: {summary}.")
        panel.eta_label.setText("")
        if preset is not None:
            self.context.models.forget(str(preset))
            panel.preset_label.setText(f"Saved model: {preset}")
            panel.preset_label.setToolTip(str(preset))
            panel.open_explorer_button.setEnabled(True)
            panel.open_qa_button.setEnabled(True)
        self._append_log(f"— {heading}: {summary}. Model: {preset}")
        self._finished_status = result.status

    @Slot(str)
    def _on_error(self, message):
        self.panel.error_banner.show_error(message)
        self.panel.status_label.setText("Failed: see the message above.")
        self._append_log(f"ERROR: {message}")
        self._finished_status = "failed"

    @Slot()
    def _on_cancelled(self):
        if self.result is not None and self.result.status != "cancelled":
            # The run ended on its own before it saw the request.
            self._on_result(self.result)
            return
        steps = self.result.global_step if self.result is not None else None
        cancelled = cancelled_line(steps)
        self.panel.status_label.setText(f"{cancelled}. Resume continues from the checkpoint.")
        self.panel.eta_label.setText("")
        self._append_log(f"— {cancelled}")
        self._finished_status = "cancelled"

    @Slot()
    def _on_finished(self):
        status = self._finished_status or "failed"
        self._finished_status = None
        if self.panel.progress_bar.maximum() == 0:
            self.panel.progress_bar.setRange(0, 1)
        self._set_running(False)
        if status in ("completed", "stopped_early"):
            self.setup.run_completed()
        self._update_buttons()
        self.run_finished.emit(status)

    # --- The saved model -------------------------------------------------------------

    def _preset_path(self):
        return (
            None
            if self.result is None or self.result.preset_path is None
            else str(self.result.preset_path)
        )

    @Slot()
    def open_in_explorer(self):
        """Makes the saved model the app's model and shows the explorer tab."""
        if self._preset_path():
            self.context.open_model(self._preset_path(), "explorer")

    @Slot()
    def open_in_question_answering(self):
        """Makes the saved model the app's model and shows the QA tab."""
        if self._preset_path():
            self.context.open_model(self._preset_path(), "qa")
