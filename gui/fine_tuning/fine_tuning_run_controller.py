"""The fine-tuning tab's run: Start, Resume and Cancel, the resume check, how it ends.

The run's lifecycle; what it shows meanwhile is `fine_tuning_run_view`'s, the form
`fine_tuning_setup_controller`'s, the widgets `fine_tuning_panel`'s.
"""

import logging
import pathlib

from PySide6.QtCore import QObject
from PySide6.QtCore import Qt
from PySide6.QtCore import Signal
from PySide6.QtCore import Slot
from PySide6.QtGui import QKeySequence
from PySide6.QtGui import QShortcut
from PySide6.QtWidgets import QMessageBox

from kbert.training.progress_events import EpochFinished
from kbert.training.progress_events import TrainingFinished
from kbert.training.progress_events import TrainingStarted
from kbert.training.run_state import CHECKPOINT_FILE
from kbert_gui.fine_tuning.fine_tuning_format import CLOSE_QUESTION
from kbert_gui.fine_tuning.fine_tuning_format import STOP_QUESTION
from kbert_gui.fine_tuning.fine_tuning_format import switch_model_question
from kbert_gui.fine_tuning.fine_tuning_job import FineTuningJob
from kbert_gui.fine_tuning.fine_tuning_run_view import FineTuningRunView
from kbert_gui.fine_tuning.fine_tuning_tasks import OPEN_TAB
from kbert_gui.fine_tuning.resume_check import ResumeCheck
from kbert_gui.fine_tuning.resume_checker import ResumeChecker
from kbert_gui.fine_tuning.start_problem import USE_SETUP_LINK
from kbert_gui.fine_tuning.start_problem import new_run_folder
from kbert_gui.fine_tuning.start_problem import resume_note
from kbert_gui.fine_tuning.start_problem import start_problem
from kbert_gui.fine_tuning.training_data_preview import DATA_KINDS

logger = logging.getLogger("gui")


class FineTuningRunController(QObject):
    """The state machine of a fine-tuning run on a `FineTuningPanel`.

    A run is idle, running or cancelling. Start and Resume submit a `FineTuningJob`
    built from the setup to the context's training pool, Cancel asks it to stop after
    the current batch (Esc asks first), and the worker's result, error or
    cancellation says how the run ended. Every progress event of the job passes
    `_on_event`, the one place that reads them, on its way to `view` (a
    `FineTuningRunView`: progress, curves, probe, evaluation table, log).

    Resume is on only where it would run: a run folder whose checkpoint fits the form's
    task, data and model (`resume_checker`'s `ResumeCheck`, made in a worker) and a form
    Start would take (`start_problem`); otherwise one sentence says why, with "Use its
    setup" where the folder has the app's `RunRecord`. Resuming continues with the run's
    own settings. A run folder of an earlier session shows its curves, scores and log from
    that record once chosen, and a form without a training file takes the run's setup,
    once. Start begins beside a folder holding a run that does not fit the form, and a run
    that fails in a folder it had to itself moves the form on to a fresh folder. "Open in
    …" makes the saved model the app's model and shows the tab that uses it.

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
        self.view = FineTuningRunView(panel)
        self.worker = None
        self.job = None
        self.result = None
        self._running = False
        self._cancelling = False
        self._finished_status = None
        self._last_run = None
        # The running run: its folder once kbert accepted it (the record goes there),
        # whether the folder was new or empty, and the form it started with.
        self._record_folder = None
        self._fresh_folder = False
        self._run_form = None
        # The run folder whose record of an earlier session the view shows.
        self._shown_record = None
        self.resume_checker = ResumeChecker(panel, context, setup, self)
        self.resume_checker.changed.connect(self._show_folder_run)
        self.resume_checker.changed.connect(self._update_buttons)
        self._connect_panel(panel, context, setup)
        self._update_buttons()

    def _connect_panel(self, panel, context, setup):
        in_tab = Qt.ShortcutContext.WidgetWithChildrenShortcut
        self.cancel_shortcut = QShortcut(QKeySequence(Qt.Key.Key_Escape), panel, context=in_tab)
        self.cancel_shortcut.setWhatsThis("Cancel the run (asks first)")
        self.cancel_shortcut.activated.connect(self.cancel_with_confirmation)
        panel.start_button.clicked.connect(self.start)
        panel.resume_button.clicked.connect(self.resume)
        panel.cancel_button.clicked.connect(self.cancel)
        panel.resume_note.linkActivated.connect(self._use_run_setup)
        panel.probe_input.probe_changed.connect(self._probe_changed)
        panel.open_model_button.clicked.connect(self.open_saved_model)
        setup.hyperparameters_ready.connect(self._update_buttons)
        panel.search_form.changed.connect(self._update_buttons)
        setup.setup_changed.connect(self._check_resume)
        context.models.source_changed.connect(self._check_resume)

    # --- Start, resume, cancel ------------------------------------------------------------

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
        problem = self._problem(resume)
        if problem:
            panel.error_banner.show_error(problem)
            return
        if not resume and (beside := new_run_folder(self.resume_checker)) is not None:
            output = str(beside)  # another run's folder: begins beside it, as the note says
            self.setup.set_output_folder(beside)
        folder = pathlib.Path(output).expanduser()
        run = (task, str(folder))
        record = None
        if resume:
            check = self.resume_checker.check
            if check.settings:
                self.setup.restore_settings(check.settings)
            if self._last_run != run:
                record = check.record  # a run of an earlier session: show it again
        self.job = self._job(task, train, output, resume)
        self._fresh_folder = not resume and not (folder.exists() and any(folder.iterdir()))
        self._record_folder = None
        continued, epochs = resume and self._last_run == run, self.job.settings.get("epochs")
        self.view.begin(task, output, resume, record, continued, self.job.search, epochs)
        self._last_run = run
        self.result = None
        self._set_running(True)
        self._submit(self.job)

    def _job(self, task, train, output, resume):
        """The `FineTuningJob` of the form; remembers the form it started with."""
        panel = self.panel
        settings = panel.hyperparameters.values()
        if not panel.hyperparameters.widget("patience").isEnabled():
            settings["patience"] = None
        # Resume continues a single run's checkpoint; a search continues by Start.
        search = None if resume else panel.search_form.search()
        source = self.context.models.source
        self._run_form = dict(task=task, source=source, settings=dict(settings), search=search)
        return FineTuningJob(
            task,
            source,
            output,
            train,
            panel.eval_file_edit.text().strip() or None,
            columns=panel.column_mapping(DATA_KINDS[task]),
            settings=settings,
            probe=panel.probe_input.probe(),
            resume=resume,
            preset_folder=self.context.models.preset_folder,
            search=search,
        )

    def _submit(self, job):
        worker = self.context.run_training(job)
        worker.signals.progress.connect(self._on_event)
        worker.signals.result.connect(self._on_result)
        worker.signals.error.connect(self._on_error)
        worker.signals.cancelled.connect(self._on_cancelled)
        worker.signals.finished.connect(self._on_finished)
        self.worker = worker

    def _problem(self, resume):
        """Why Start (or Resume) would be refused now, in one sentence, or None."""
        panel = self.panel
        train, output = panel.train_file_edit.text().strip(), panel.output_edit.text().strip()
        task = self.setup.task()
        return start_problem(panel, self.setup, self.resume_checker, task, train, output, resume)

    @Slot()
    def cancel_with_confirmation(self):
        """Esc: asks whether to stop the run, and cancels it if the user says so."""
        if self._running and not self._cancelling and self._ask(*STOP_QUESTION):
            self.cancel()

    def may_close(self):
        """Whether the window may close: asks first while a run is in progress."""
        return not self._running or self._ask(*CLOSE_QUESTION)

    def _ask(self, title, text):
        yes, no = QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No
        return QMessageBox.question(self.panel, title, text, yes | no, no) == yes

    @Slot()
    def cancel(self):
        """Asks the run to stop after the current batch (it writes a checkpoint)."""
        if not self._running or self._cancelling:
            return
        self._cancelling = True
        self.worker.cancel()
        self.view.show_cancelling()
        self._update_buttons()

    def _set_running(self, running):
        self._running = running
        self._cancelling = False
        self.setup.set_locked(running)
        self._update_buttons()

    @Slot()
    def _update_buttons(self):
        ready = self.panel.hyperparameters.is_ready and not self._running
        check = self.resume_checker.check
        current = self.resume_checker.is_current(check)
        # Resume is on only where it would run: the checkpoint fits and the form is complete.
        problem = self._problem(resume=True) if current and check.has_checkpoint else None
        resumable = current and check.compatible and problem is None
        self.panel.start_button.setEnabled(ready)
        self.panel.resume_button.setEnabled(ready and resumable)
        self.panel.cancel_button.setEnabled(self._running and not self._cancelling)
        note = resume_note(self.panel, check, problem) if current and not self._running else ""
        self.panel.resume_note.setText(note)
        self.panel.resume_note.setVisible(bool(note))

    # --- Whether the run folder's run can be resumed -------------------------------------

    def has_checkpoint(self):
        """Whether the output folder holds a training checkpoint to resume from."""
        return self.resume_checker.has_checkpoint()

    @property
    def resume_check(self):
        """The latest `ResumeCheck` of the run folder, or None while it is made."""
        return self.resume_checker.check

    @Slot()
    def _check_resume(self):
        # A running run's folder is its own: nothing to compare until it ends.
        if not self._running:
            self.resume_checker.refresh()

    @Slot()
    def _show_folder_run(self):
        """A run folder of an earlier session: its curves and log are shown, and a form
        that names no training file takes the run's setup (task, files, settings)."""
        check = self.resume_checker.check
        if self._running or not self.resume_checker.is_current(check) or check.record is None:
            return
        shown_here = self._last_run is not None and self._last_run[1] == check.folder
        if self._shown_record == check.folder or shown_here:
            return  # shown already: what the user chose since (another task, no file) stays
        self._shown_record = check.folder
        self.view.show_earlier_run(check.record)
        if not self.panel.train_file_edit.text().strip():
            # The model stays the window's: a run of another one says so, with the link.
            self.setup.restore(check.record)

    @Slot(str)
    def _use_run_setup(self, link):
        """"Use its setup": the form takes the run's setup; its model once the user agrees."""
        check = self.resume_checker.check
        record = check.record if check is not None else None
        if link != USE_SETUP_LINK or record is None:
            return
        source, current = record.source, self.context.models.source
        if source != current and self._ask(*switch_model_question(source, current)):
            self.context.models.set_source(source)
        self.setup.restore(record)

    def _probe_changed(self):
        if self._running and self.job is not None:
            self.job.set_probe(self.panel.probe_input.probe())

    # --- Progress (UI thread, from the worker's signals) ----------------------------------

    @Slot(object)
    def _on_event(self, event):
        # The one place that reads the job's events (typed: see `FineTuningJob`).
        self.view.show_event(event, self.job.task_name)
        if isinstance(event, TrainingStarted):
            # kbert accepted the folder: the run's record may go there now.
            self._record_folder = self.job.output_dir
        elif isinstance(event, TrainingFinished) and self.job.search is None:
            self.result = event.result  # (a search's result is the job's own)
        if isinstance(event, (TrainingStarted, EpochFinished)):
            self._write_record()
        self.training_event.emit(event)

    def _write_record(self):
        if self._record_folder is None:
            return
        try:
            self.view.record(self.job, self._run_form).write(self._record_folder)
        except (OSError, ValueError) as error:  # a full disk, a temporary swapped for a link
            logger.warning("Could not write the run's record: %s", error)

    def export_actions(self):
        """The curves as PNG or SVG, the evaluation table as CSV, the log as text."""
        return self.view.export_actions()

    # --- How the run ended -------------------------------------------------------------

    @Slot(object)
    def _on_result(self, result):
        self.result = result
        if result.preset_path is not None:
            self.context.models.forget(str(result.preset_path))
        show = self.view.show_cancelled if result.status == "cancelled" else self.view.show_result
        show(result, self.job.task_name)
        self._finished_status = result.status

    @Slot(str)
    def _on_error(self, message):
        self.view.show_error(message)
        self._finished_status = "failed"

    @Slot()
    def _on_cancelled(self):
        if self.result is not None:  # it may have ended on its own before it saw the request
            self._on_result(self.result)
            return
        self.view.show_cancelled(None, self.job.task_name)
        self._finished_status = "cancelled"

    @Slot()
    def _on_finished(self):
        status = self._finished_status or "failed"
        self._finished_status = None
        self.view.show_ended()
        self._write_record()
        # Whether kbert accepted the folder and trained there with this form.
        trained_here = self._record_folder is not None
        self._record_folder = None
        folder = self.job.output_dir
        self._set_running(False)
        if status in ("completed", "stopped_early"):
            self.setup.run_completed()
        elif status == "failed" and self._left_files_in_fresh_folder(folder):
            # What the failed run left there would make the next Start refuse the folder.
            fresh = self.setup.advance_output_folder()
            self.panel.status_label.setText(
                f"Failed: see the message above. The next run uses {fresh}; what this one "
                f"wrote stays in {folder}."
            )
        if (
            trained_here
            and (folder / CHECKPOINT_FILE).is_file()
            and str(folder) == self.resume_checker.folder()
        ):
            # The form is the run's own: its checkpoint fits it.
            self.resume_checker.set_check(
                ResumeCheck(str(folder), True, settings=self._run_form["settings"])
            )
        else:
            self._check_resume()
        self._update_buttons()
        self.run_finished.emit(status)

    def _left_files_in_fresh_folder(self, folder):
        """Whether a run that had `folder` to itself left files there but no checkpoint."""
        return (
            self._fresh_folder
            and folder.is_dir()
            and any(folder.iterdir())
            and not (folder / CHECKPOINT_FILE).is_file()
        )

    # --- The saved model -------------------------------------------------------------

    @Slot()
    def open_saved_model(self):
        """Makes the saved model the app's model and shows the tab that uses it."""
        if self.result is not None and self.result.preset_path is not None:
            tab = OPEN_TAB[self.job.task_name]
            self.context.open_model(str(self.result.preset_path), tab)
