"""What a fine-tuning run shows while it runs and when it ends: progress, curves, probe,
evaluation table, log, the saved model; and the record that brings them back."""

import datetime
import time

from PySide6.QtCore import QObject
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QListWidgetItem

from kbert.finetuning.task_specs import TASK_SPECS
from kbert.training.progress_events import EpochFinished
from kbert.training.progress_events import StepFinished
from kbert.training.progress_events import TrainingStarted
from kbert_gui.fine_tuning.eta_estimator import EtaEstimator
from kbert_gui.fine_tuning.fine_tuning_events import LogLine
from kbert_gui.fine_tuning.fine_tuning_events import ProbePredicted
from kbert_gui.fine_tuning.fine_tuning_events import TrialFinished
from kbert_gui.fine_tuning.fine_tuning_format import ETA_ESTIMATING
from kbert_gui.fine_tuning.fine_tuning_format import TRAINING_LOSS
from kbert_gui.fine_tuning.fine_tuning_format import cancelled_line
from kbert_gui.fine_tuning.fine_tuning_format import curve_names
from kbert_gui.fine_tuning.fine_tuning_format import earlier_run_line
from kbert_gui.fine_tuning.fine_tuning_format import epoch_line
from kbert_gui.fine_tuning.fine_tuning_format import eta_text
from kbert_gui.fine_tuning.fine_tuning_format import log_line
from kbert_gui.fine_tuning.fine_tuning_format import probe_line
from kbert_gui.fine_tuning.fine_tuning_format import result_summary
from kbert_gui.fine_tuning.fine_tuning_format import result_table
from kbert_gui.fine_tuning.fine_tuning_format import start_line
from kbert_gui.fine_tuning.fine_tuning_format import status_heading
from kbert_gui.fine_tuning.fine_tuning_format import steps_text
from kbert_gui.fine_tuning.fine_tuning_tasks import OPEN_TAB
from kbert_gui.fine_tuning.fine_tuning_tasks import TASKS
from kbert_gui.fine_tuning.run_phase_clock import RunPhaseClock
from kbert_gui.fine_tuning.run_record import RunRecord
from kbert_gui.fine_tuning.search_progress import SearchProgress
from kbert_gui.services.export_files import ExportAction
from kbert_gui.services.export_files import image_actions
from kbert_gui.services.export_files import write_csv
from kbert_gui.services.export_files import write_text
from kbert_gui.services.score_words import metric_name
from kbert_gui.services.score_words import scores_in_percent
from kbert_gui.widgets import style


class FineTuningRunView(QObject):
    """The live view of a run on a `FineTuningPanel`'s Training and Log pages.

    `FineTuningRunController` (the run's lifecycle) tells it what happens: a run
    begins (`begin`), each progress event arrives (`show_event`: the progress bar
    and ETA, the loss and metric curves, the evaluation rows, the probe list, the
    log), a cancel is asked for, and the run ends (`show_result`, `show_error`,
    `show_cancelled`). It keeps what the panel cannot hold itself: the evaluation
    rows of the epochs so far and the whole log (the log view keeps its latest lines
    only). `record` turns all of it into the `RunRecord` the run folder keeps, and
    `show_record` shows such a record again after a restart. While the run waits for
    something (the model and data, the first step's compilation, a slow step, the
    cancel), the status line says what, with the seconds ticking (`phase`).

    Args:
        panel: the `FineTuningPanel` (also the parent).
        clock: seconds from any origin, for the waits shown (tests pass their own).
    """

    def __init__(self, panel, clock=time.monotonic):
        super().__init__(panel)
        self.panel = panel
        self.phase = RunPhaseClock(panel.status_label, clock, self)
        self._epoch_rows = []
        self._log_lines = []
        self._eta = EtaEstimator()
        self._steps_per_epoch = None
        self._epochs = None
        self._resume = False
        self._cancelling = False
        self._in_percent = False  # scores_in_percent of the run shown
        # A search's finished trials: trial number -> (loss points, metric points, rows).
        self._trials = {}
        self.search = SearchProgress(panel)

    # --- A run begins -------------------------------------------------------------------

    def begin(
        self, task, output, resume, record=None, continued=False, search=None, epochs=None
    ):
        """Shows a run of `task` starting in `output`.

        Args:
            task: the task name.
            output: the run folder, as the form names it.
            resume: whether the run resumes from a checkpoint.
            record: a `RunRecord` of the run from an earlier session, to show again.
            continued: whether the view already shows this run (a resume in the same
                session): its curves, probes and rows stay.
            search: the job's search (`SearchForm.search`), or None for a single run.
            epochs: the run's epochs, where all of its steps are of that many epochs
                (None: unknown), to say when a slow step is an epoch's evaluation.
        """
        panel = self.panel
        if record is not None:
            self.show_record(record)
        elif not continued:
            panel.chart.clear()
            panel.chart.set_names(*curve_names(task))
            panel.probe_list.clear()
            self._epoch_rows = []
        self._cancelling = False
        self._resume = resume
        self._epochs = epochs
        self._trials = {}
        self._in_percent = scores_in_percent(task)
        panel.evaluation_model.in_percent = self._in_percent
        panel.evaluation_model.set_rows(self._epoch_rows)
        panel.preset_label.clear()
        panel.progress_bar.setRange(0, 0)
        panel.eta_label.setText("")
        self.phase.wait(
            "Resuming: loading the model, the data and the checkpoint…"
            if resume
            else "Loading the model and the data…"
        )
        panel.open_model_button.setEnabled(False)
        self.append_log(start_line(TASKS[task][0], output, resume))
        metric = TASK_SPECS[task].metric if search is not None else None
        self.search.begin(search, metric, task, output)
        panel.pages.setCurrentIndex(1)

    def show_record(self, record):
        """Shows a run of an earlier session as it was: curves, scores, log."""
        panel = self.panel
        panel.chart.clear()
        panel.chart.set_names(*record.curve_names)
        panel.chart.set_points(record.loss_points, record.metric_points)
        panel.probe_list.clear()
        self._epoch_rows = [dict(row) for row in record.epoch_rows]
        self._in_percent = scores_in_percent(record.task)
        panel.evaluation_model.in_percent = self._in_percent
        self._log_lines = list(record.log)
        panel.log_view.setPlainText("\n".join(self._log_lines))

    def show_earlier_run(self, record):
        """Shows the run a chosen run folder holds (of an earlier session), not yet resumed."""
        self.show_record(record)
        panel = self.panel
        panel.evaluation_model.set_rows(self._epoch_rows)
        steps = [point[0] for point in record.loss_points]
        panel.progress_bar.setRange(0, 1)
        panel.progress_bar.setValue(0)
        panel.progress_bar.setFormat(f"Stopped after step {steps[-1]}" if steps else "Not started")
        # The last step, not the number of points: a long run's curve comes thinned.
        panel.status_label.setText(
            earlier_run_line(TASKS[record.task][0], steps[-1] if steps else 0)
        )
        panel.pages.setCurrentIndex(1)

    # --- While it runs --------------------------------------------------------------------

    def show_event(self, event, task):
        """Shows one progress event of the run of `task` (typed: see `FineTuningJob`)."""
        if isinstance(event, StepFinished):
            self._show_step(event, metric=event.logs.get("mlm_accuracy"))
        elif isinstance(event, EpochFinished):
            self._show_epoch(event, TASK_SPECS[task].metric)
        elif isinstance(event, ProbePredicted):
            self._show_probe(event.epoch, event.result, event.error)
        elif isinstance(event, LogLine):
            self.append_log(log_line(event.message, event.level))
        elif isinstance(event, TrainingStarted):
            if self.search.active:
                self._epoch_rows = self.search.trial_started()
                self._resume = False  # a new trial starts from its first step
            self._show_train_begin(event.total_steps)
        elif isinstance(event, TrialFinished):
            chart = self.panel.chart
            self._trials[event.row["trial"]] = (
                chart.loss_points, chart.metric_points, list(self._epoch_rows)
            )
            self.append_log(self.search.trial_finished(event.row))

    def show_cancelling(self):
        """A cancel was asked for: the run stops after the current batch."""
        self._cancelling = True
        self.phase.wait("Cancelling after the current batch…")
        self.append_log("— Cancel requested")

    def _show_train_begin(self, total_steps):
        total = max(int(total_steps), 1)
        bar = self.panel.progress_bar
        bar.setRange(0, total)
        if not self._resume:
            bar.setValue(0)  # (a search's next trial: not the last one's final step)
            bar.setFormat(steps_text(0, total))
        else:
            bar.setFormat(f"%v / {total:,} steps")
        self.panel.chart.set_total_steps(total)
        self._eta.start(total)
        epochs = self._epochs if not self.search.active else None
        self._steps_per_epoch = total // epochs if epochs and total % epochs == 0 else None
        # A new run or trial: no estimate until its own steps give one.
        self.panel.eta_label.setText(ETA_ESTIMATING)
        if not self._cancelling:
            self.phase.wait(self.search.status("Compiling the training step…"))

    def _show_step(self, event, metric):
        panel, step = self.panel, event.step
        shown = min(step, panel.progress_bar.maximum())
        panel.progress_bar.setValue(shown)
        panel.progress_bar.setFormat(steps_text(shown, panel.progress_bar.maximum()))
        self._eta.step_done(step, event.time)
        left = self._eta.seconds_left()
        if left is not None:
            panel.eta_label.setText(eta_text(left, self._eta.seconds_per_step()))
        if event.loss is not None:
            panel.chart.add_loss_point(step, event.loss)
        if metric is not None:
            panel.chart.add_metric_point(step, metric)
        if not self._cancelling:
            self._show_stepping(step, event.epoch, evaluating=self._ends_epoch(step))

    def _show_stepping(self, step, epoch, evaluating):
        """The status line after step `step`, and what a slow next step waits for."""
        where = f"epoch {epoch}, step {step:,}" if epoch is not None else f"step {step:,}"
        text = self.search.status(f"Training: {where}")
        self.phase.stepping(text, step + 1, self._eta.seconds_per_step(), evaluating)

    def _ends_epoch(self, step):
        """Whether step `step` is an epoch's last (as far as the view knows)."""
        per_epoch = self._steps_per_epoch
        return step >= self._eta.total_steps or bool(per_epoch and step % per_epoch == 0)

    def _show_epoch(self, event, metric):
        value = event.logs.get(metric)
        if value is not None:
            self.panel.chart.set_names(
                TRAINING_LOSS, f"evaluation {metric_name(metric)}", True, metric, self._in_percent
            )
            self.panel.chart.add_metric_point(event.step, value)
        self._epoch_rows = [row for row in self._epoch_rows if row.get("epoch") != event.epoch]
        self._epoch_rows.append(dict(event.logs))
        self.panel.evaluation_model.set_rows(self._epoch_rows)
        self.append_log(epoch_line(event.epoch, event.logs, self._in_percent))
        if not self._cancelling and event.step < self._eta.total_steps:
            # Evaluated: from now on the run waits for the next epoch's first step.
            self._show_stepping(event.step, event.epoch, evaluating=False)

    def _show_probe(self, epoch, result, error):
        line, tooltip = probe_line(epoch, result, error)
        item = QListWidgetItem(line)
        item.setToolTip(tooltip)
        if error:
            item.setForeground(QColor(style.ERROR.text))
        self.panel.probe_list.addItem(item)
        self.panel.probe_list.scrollToBottom()

    def append_log(self, message):
        """Adds a line to the log, after the time of day."""
        stamp = datetime.datetime.now().strftime("%H:%M:%S")
        line = f"{stamp}  {message}"
        self._log_lines.append(line)
        self.panel.log_view.appendPlainText(line)

    def log_text(self):
        """The whole log of the tab's runs (the view keeps only the latest lines)."""
        return "".join(line + "\n" for line in self._log_lines)

    # --- How it ended ---------------------------------------------------------------------

    def show_result(self, result, task):
        """Shows the result of a run of `task` that ended on its own (or stopped early)."""
        panel = self.panel
        preset = result.preset_path
        if self.search.active:
            heading, summary = self.search.show_result(result)
            self._show_kept_trial(result)
        else:
            panel.evaluation_model.set_rows(*result_table(result))
            summary = result_summary(result, self._in_percent)
            heading = status_heading(result.status)
        self.phase.stop()
        panel.status_label.setText(f"{heading}: {summary}.")
        panel.eta_label.setText("")
        self._show_saved_model(preset, task, "Saved model")
        self.append_log(f"— {heading}: {summary}. Model: {preset}")

    def _show_kept_trial(self, result):
        """After a search, the curves and scores are those of the trial whose model it
        kept (not of the trial that happened to run last)."""
        best = getattr(result, "best", None)
        kept = self._trials.get(best["trial"]) if best is not None else None
        if kept is None:
            return
        loss_points, metric_points, rows = kept
        self.panel.chart.set_points(loss_points, metric_points)
        self._epoch_rows = rows
        best_row = next(
            (i for i, row in enumerate(rows) if row.get("epoch") == best.get("best_epoch")), None
        )
        reason = f"Trial {best['trial'] + 1}: the search kept its model."
        self.panel.evaluation_model.set_rows(rows, best_row, reason)
        kept_metric = f"evaluation {metric_name(result.metric)}, trial {best['trial'] + 1} (kept)"
        self.panel.chart.set_names(
            TRAINING_LOSS, kept_metric, True, result.metric, self._in_percent
        )

    def _show_saved_model(self, preset, task, heading):
        """Names the saved model (None: none) and offers to open it in its tab."""
        if preset is not None:
            self.panel.preset_label.setText(f"{heading}: {preset}")
            self.panel.preset_label.setToolTip(str(preset))
            self.panel.set_open_target(OPEN_TAB[task])
            self.panel.open_model_button.setEnabled(True)

    def show_error(self, message):
        self.phase.stop()
        self.panel.error_banner.show_error(message)
        self.panel.status_label.setText("Failed: see the message above.")
        self.append_log(f"ERROR: {message}")

    def show_cancelled(self, result, task):
        """The run of `task` stopped at a cancel: `result` (None: before any step) has
        its steps and the best model its finished epochs saved, which can be opened."""
        self.phase.stop()
        cancelled = cancelled_line(result.global_step if result is not None else None)
        if result is not None:
            self._show_saved_model(result.preset_path, task, "Best model saved before the cancel")
        if self.search.active:
            cancelled = self.search.cancelled_line()
            self.panel.status_label.setText(f"{cancelled}. Start continues it in this folder.")
        else:
            self.panel.status_label.setText(f"{cancelled}. Resume continues from the checkpoint.")
        self.panel.eta_label.setText("")
        self.append_log(f"— {cancelled}")

    def show_ended(self):
        """The run is over, however it ended: a progress bar still moving stops, and
        so do the seconds of the status line."""
        self.phase.stop()
        if self.panel.progress_bar.maximum() == 0:
            self.panel.progress_bar.setRange(0, 1)

    # --- The record and the exports ---------------------------------------------------------

    def record(self, job, form):
        """The `RunRecord` of `job` (a `FineTuningJob`) started from `form` (its task,
        model and settings), with what the view shows of it now."""
        chart = self.panel.chart
        return RunRecord(
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
            search=form.get("search"),
        )

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
