"""The fine-tuning tab's run: Start, Resume and Cancel, the live view, the result.

Longer than 400 lines on purpose: it is the run's one state machine (idle, running,
cancelling; then completed, stopped early, cancelled or failed) and every transition
and what it shows sits here; the form lives in `fine_tuning_setup_controller`, the widgets in
`fine_tuning_panel`, the texts in `fine_tuning_format`.
"""

import datetime
import logging
import pathlib

from PySide6.QtCore import QObject
from PySide6.QtCore import Qt
from PySide6.QtCore import Signal
from PySide6.QtCore import Slot
from PySide6.QtGui import QColor
from PySide6.QtGui import QKeySequence
from PySide6.QtGui import QShortcut
from PySide6.QtWidgets import QListWidgetItem
from PySide6.QtWidgets import QMessageBox

from kbert.finetuning.task_specs import TASK_SPECS
from kbert.training.progress_events import EpochFinished
from kbert.training.progress_events import StepFinished
from kbert.training.progress_events import TrainingFinished
from kbert.training.progress_events import TrainingStarted
from kbert.training.run_state import CHECKPOINT_FILE
from kbert_gui.fine_tuning.column_mapping_form import CHOOSE_LABEL
from kbert_gui.fine_tuning.eta_estimator import EtaEstimator
from kbert_gui.services.export_files import ExportAction
from kbert_gui.services.export_files import image_actions
from kbert_gui.services.export_files import write_csv
from kbert_gui.services.export_files import write_text
from kbert_gui.fine_tuning.fine_tuning_events import LogLine
from kbert_gui.fine_tuning.fine_tuning_events import ProbePredicted
from kbert_gui.fine_tuning.fine_tuning_format import cancelled_line
from kbert_gui.fine_tuning.fine_tuning_format import curve_names
from kbert_gui.fine_tuning.fine_tuning_format import epoch_line
from kbert_gui.fine_tuning.fine_tuning_format import eta_text
from kbert_gui.fine_tuning.fine_tuning_format import log_line
from kbert_gui.fine_tuning.fine_tuning_format import probe_line
from kbert_gui.fine_tuning.fine_tuning_format import result_summary
from kbert_gui.fine_tuning.fine_tuning_format import result_table
from kbert_gui.fine_tuning.fine_tuning_format import start_line
from kbert_gui.fine_tuning.fine_tuning_format import status_heading
from kbert_gui.fine_tuning.fine_tuning_job import FineTuningJob
from kbert_gui.fine_tuning.fine_tuning_tasks import TASKS
from kbert_gui.services.latest_request_runner import LatestRequestRunner
from kbert_gui.fine_tuning.resume_check import ResumeCheck
from kbert_gui.fine_tuning.run_record import RunRecord
from kbert_gui.fine_tuning.training_data_preview import DATA_KINDS

logger = logging.getLogger("gui")
USE_SETUP_LINK = "use-setup"


class FineTuningRunController(QObject):
    """The state machine of a fine-tuning run, shown on a `FineTuningPanel`.

    A run is idle, running or cancelling. Start and Resume submit a `FineTuningJob`
    built from the setup to the context's training pool, Cancel asks it to stop after
    the current batch (Esc asks first), and the worker's result, error or
    cancellation says how the run ended. Every progress event of the job passes
    `_on_event`, the one place that reads them, on its way to the progress bar, the
    curves, the probe list, the evaluation table and the log.

    Resume is on only for a run folder whose checkpoint fits the form's task, data
    and model (a `ResumeCheck`, made in a worker); otherwise one sentence says what
    differs. Resuming continues with the run's own settings, and after a restart
    shows its curves, scores and log again from the `RunRecord` the tab keeps in the
    run folder. A run that fails in a folder it had to itself moves the form on to a
    fresh folder, so the next Start is not refused.

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
        self._log_lines = []
        self._eta = EtaEstimator()
        # The running run: its folder once kbert accepted it (the record goes there),
        # whether the folder was new or empty, and the form it started with.
        self._record_folder = None
        self._fresh_folder = False
        self._run_form = None
        self._resume_check = None
        self._resume_runner = LatestRequestRunner(context.inference_pool, 300, self)
        self._resume_runner.result.connect(self._show_resume_check)
        self._resume_runner.error.connect(self._show_resume_error)

        self.cancel_shortcut = QShortcut(
            QKeySequence(Qt.Key.Key_Escape),
            panel,
            context=Qt.ShortcutContext.WidgetWithChildrenShortcut,
        )
        self.cancel_shortcut.activated.connect(self.cancel_with_confirmation)
        panel.start_button.clicked.connect(self.start)
        panel.resume_button.clicked.connect(self.resume)
        panel.cancel_button.clicked.connect(self.cancel)
        panel.resume_note.linkActivated.connect(self._use_run_setup)
        panel.probe_input.probe_changed.connect(self._probe_changed)
        panel.open_explorer_button.clicked.connect(self.open_in_explorer)
        panel.open_qa_button.clicked.connect(self.open_in_question_answering)
        setup.hyperparameters_ready.connect(self._update_buttons)
        setup.setup_changed.connect(self._check_resume)
        context.models.source_changed.connect(self._check_resume)
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
        problem = self._start_problem(task, train, output, resume)
        if problem:
            panel.error_banner.show_error(problem)
            return
        folder = pathlib.Path(output).expanduser()
        run = (task, str(folder))
        record = None
        if resume:
            check = self._resume_check
            if check.settings:
                self.setup.restore_settings(check.settings)
            if self._last_run != run:
                record = check.record  # a run of an earlier session: show it again
        settings = panel.hyperparameters.values()
        if not panel.hyperparameters.widget("patience").isEnabled():
            settings["patience"] = None
        self._fresh_folder = not resume and not (folder.exists() and any(folder.iterdir()))
        self._record_folder = None
        self._run_form = dict(
            task=task, source=self.context.models.source, settings=dict(settings)
        )
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
        if record is not None:
            self._show_record(record)
        elif not (resume and self._last_run == run):
            panel.chart.clear()
            panel.chart.set_names(*curve_names(task))
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

    def _start_problem(self, task, train, output, resume):
        """Why the run cannot start now, or None."""
        panel = self.panel
        preview = self.setup.preview
        mapping = panel.column_form.mapping()
        if not panel.hyperparameters.is_ready:
            return "The hyperparameters are still loading."
        if not train:
            return "Choose a training file."
        if not output:
            return "Choose a run folder."
        if DATA_KINDS[task] == "table" and mapping is not None and mapping["label_column"] is None:
            return CHOOSE_LABEL
        if preview is not None and preview.path == train and preview.error:
            return f"Fix the training data first: {preview.error}"
        if DATA_KINDS[task] == "table" and mapping is None:
            return "The training file's columns are not known yet."
        check = self._resume_check
        if resume and (check is None or not check.compatible or check.folder != self._folder()):
            return (check.sentence() if check is not None else "") or (
                "The run folder holds no run to resume."
            )
        return None

    def _folder(self):
        output = self.panel.output_edit.text().strip()
        return str(pathlib.Path(output).expanduser()) if output else ""

    @Slot()
    def cancel_with_confirmation(self):
        """Esc: asks whether to stop the run, and cancels it if the user says so."""
        if not self._running or self._cancelling:
            return
        answer = QMessageBox.question(
            self.panel,
            "Stop training?",
            "Stop the run after the current batch? It writes a checkpoint, and Resume "
            "continues from it.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.cancel()

    def may_close(self):
        """Whether the window may close: asks first while a run is in progress."""
        if not self._running:
            return True
        answer = QMessageBox.question(
            self.panel,
            "Training is running",
            "A run is in progress. Close anyway? It stops after the current batch and "
            "writes a checkpoint; after a restart, choose its run folder and Resume "
            "continues it with its curves and log.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

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
        check = self._resume_check
        resumable = check is not None and check.folder == self._folder() and check.compatible
        self.panel.start_button.setEnabled(ready)
        self.panel.resume_button.setEnabled(ready and resumable)
        self.panel.cancel_button.setEnabled(self._running and not self._cancelling)
        note = ""
        if check is not None and check.folder == self._folder() and not self._running:
            note = check.sentence()
            if note and check.record is not None:
                note += f' <a href="{USE_SETUP_LINK}">Use its setup</a>'
        self.panel.resume_note.setText(note)
        self.panel.resume_note.setVisible(bool(note))

    def has_checkpoint(self):
        """Whether the output folder holds a training checkpoint to resume from."""
        folder = self._folder()
        return bool(folder) and (pathlib.Path(folder) / CHECKPOINT_FILE).is_file()

    @property
    def resume_check(self):
        """The latest `ResumeCheck` of the run folder, or None while it is made."""
        return self._resume_check

    @Slot()
    def _check_resume(self):
        """Compares the run folder's checkpoint with the form (in a worker)."""
        if self._running:
            return
        folder = self._folder()
        if not self.has_checkpoint():
            self._resume_runner.cancel()
            self._resume_check = ResumeCheck(folder, False) if folder else None
            self._update_buttons()
            return
        self._resume_check = None
        self._update_buttons()
        panel = self.panel
        task = self.setup.task()
        self._resume_runner.submit(
            ResumeCheck.run,
            self.context.models,
            folder,
            task,
            self.context.models.source,
            panel.train_file_edit.text().strip(),
            panel.column_form.mapping() if DATA_KINDS[task] == "table" else None,
        )

    @Slot(object)
    def _show_resume_check(self, check):
        if check.folder == self._folder():
            self._resume_check = check
            self._update_buttons()

    @Slot(str)
    def _show_resume_error(self, message):
        self._resume_check = ResumeCheck(
            self._folder(), True, (f"cannot be compared with the form ({message})",)
        )
        self._update_buttons()

    @Slot(str)
    def _use_run_setup(self, link):
        """"Use its setup": the form takes the run's task, files, settings and model."""
        record = self._resume_check.record if self._resume_check is not None else None
        if link != USE_SETUP_LINK or record is None:
            return
        if record.source != self.context.models.source:
            self.context.models.set_source(record.source)
        self.setup.restore(record)

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
            # kbert accepted the folder: the run's record may go there now.
            self._record_folder = self.job.output_dir
        elif isinstance(event, TrainingFinished):
            self.result = event.result
        if isinstance(event, (TrainingStarted, EpochFinished)):
            self._write_record()
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
        line = f"{stamp}  {message}"
        self._log_lines.append(line)
        self.panel.log_view.appendPlainText(line)

    def log_text(self):
        """The whole log of the tab's runs (the view keeps only the latest lines)."""
        return "".join(line + "\n" for line in self._log_lines)

    # --- The run's record --------------------------------------------------------------

    def _write_record(self):
        if self._record_folder is None:
            return
        job, form, chart = self.job, self._run_form, self.panel.chart
        record = RunRecord(
            task=job.task_name,
            source=form["source"],
            train=job.train_path,
            evaluation=job.evaluation_path,
            columns=job.columns or None,
            settings=form["settings"],
            probe=job.probe(),
            curve_names=chart.names(),
            loss_points=chart.loss_points,
            metric_points=chart.metric_points,
            epoch_rows=tuple(self._epoch_rows),
            log=tuple(self._log_lines),
        )
        try:
            record.write(self._record_folder)
        except OSError as error:
            logger.warning("Could not write the run's record: %s", error)

    def _show_record(self, record):
        """Shows a run of an earlier session as it was: curves, scores, log."""
        panel = self.panel
        panel.chart.clear()
        panel.chart.set_names(*record.curve_names)
        panel.chart.set_points(record.loss_points, record.metric_points)
        panel.probe_list.clear()
        self._epoch_rows = [dict(row) for row in record.epoch_rows]
        self._log_lines = list(record.log)
        panel.log_view.setPlainText("\n".join(self._log_lines))

    # --- Export ------------------------------------------------------------------------

    def export_actions(self):
        """The curves as PNG or SVG, the evaluation table as CSV, the log as text."""
        evaluation, chart = self.panel.evaluation_model, self.panel.chart
        return [
            *image_actions("Training curves", chart, lambda: not chart.is_empty()),
            ExportAction(
                "Evaluation table as CSV…",
                "CSV files (*.csv)",
                ".csv",
                lambda path: write_csv(path, evaluation.keys, evaluation.records()),
                lambda: evaluation.rowCount() > 0,
            ),
            ExportAction(
                "Run log as text…",
                "Text files (*.txt)",
                ".txt",
                lambda path: write_text(path, self.log_text()),
                lambda: bool(self._log_lines),
            ),
        ]

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
        self._write_record()
        self._record_folder = None
        folder = self.job.output_dir
        self._set_running(False)
        if status in ("completed", "stopped_early"):
            self.setup.run_completed()
        elif (
            status == "failed"
            and self._fresh_folder
            and folder.is_dir()
            and any(folder.iterdir())
            and not (folder / CHECKPOINT_FILE).is_file()
        ):
            # What the failed run left there would make the next Start refuse the folder.
            fresh = self.setup.advance_output_folder()
            self.panel.status_label.setText(
                f"Failed: see the message above. The next run uses {fresh}; what this one "
                f"wrote stays in {folder}."
            )
        if (folder / CHECKPOINT_FILE).is_file() and str(folder) == self._folder():
            # The form is the run's own: its checkpoint fits it.
            self._resume_check = ResumeCheck(
                str(folder), True, settings=self._run_form["settings"]
            )
        else:
            self._check_resume()
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
