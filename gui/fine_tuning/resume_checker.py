"""Keeps the fine-tuning form's `ResumeCheck` current: can Resume continue the run folder?"""

import pathlib

from PySide6.QtCore import QObject
from PySide6.QtCore import Signal
from PySide6.QtCore import Slot

from kbert.training.run_state import CHECKPOINT_FILE
from kbert_gui.fine_tuning.resume_check import ResumeCheck
from kbert_gui.fine_tuning.training_data_preview import DATA_KINDS
from kbert_gui.services.latest_request_runner import LatestRequestRunner


class ResumeChecker(QObject):
    """Compares the run folder of a `FineTuningPanel`'s form with the form, as it changes.

    `refresh()` (on every change of the setup or the model) looks for a checkpoint in
    the run folder: without one, `check` is at once a `ResumeCheck` that has none;
    with one, `check` is None while a worker compares the checkpoint with the form's
    task, data and model (`ResumeCheck.run`, latest request only), then that
    comparison. `changed` follows every new `check`.

    Signals:
        changed(): `check` is another one.

    Args:
        panel: the `FineTuningPanel`.
        context: the `AppContext`.
        setup: the `FineTuningSetupController` (the form's task).
        parent: the owning QObject.
    """

    changed = Signal()

    def __init__(self, panel, context, setup, parent=None):
        super().__init__(parent)
        self.panel = panel
        self.context = context
        self.setup = setup
        self.check = None
        self._runner = LatestRequestRunner(context.inference_pool, 300, self)
        self._runner.result.connect(self._checked)
        self._runner.error.connect(self._failed)

    def folder(self):
        """The form's run folder, "" without one."""
        output = self.panel.output_edit.text().strip()
        return str(pathlib.Path(output).expanduser()) if output else ""

    def has_checkpoint(self):
        """Whether the run folder holds a training checkpoint to resume from."""
        folder = self.folder()
        return bool(folder) and (pathlib.Path(folder) / CHECKPOINT_FILE).is_file()

    def is_current(self, check):
        """Whether `check` is about the form's run folder as it is now."""
        return check is not None and check.folder == self.folder()

    def set_check(self, check):
        """Takes `check` as it is (a run just ended in the folder with this form)."""
        self._runner.cancel()
        self.check = check
        self.changed.emit()

    @Slot()
    def refresh(self):
        """Checks the run folder again: at once without a checkpoint, else in a worker."""
        folder = self.folder()
        if not self.has_checkpoint():
            self.set_check(ResumeCheck(folder, False) if folder else None)
            return
        self.check = None
        self.changed.emit()
        panel = self.panel
        task = self.setup.task()
        self._runner.submit(
            ResumeCheck.run,
            self.context.models,
            folder,
            task,
            self.context.models.source,
            panel.train_file_edit.text().strip(),
            panel.column_mapping(DATA_KINDS[task]),
        )

    @Slot(object)
    def _checked(self, check):
        if self.is_current(check):
            self.check = check
            self.changed.emit()

    @Slot(str)
    def _failed(self, message):
        self.check = ResumeCheck(
            self.folder(), True, (f"cannot be compared with the form ({message})",)
        )
        self.changed.emit()
