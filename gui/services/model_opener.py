"""Opening a model the user picked: checked in a worker before it becomes the model."""

from PySide6.QtCore import QObject
from PySide6.QtCore import Signal
from PySide6.QtCore import Slot

from kbert_gui.services.latest_request_runner import LatestRequestRunner


class ModelOpener(QObject):
    """Checks a model source in the background, then makes it the app's model.

    `open(source)` resolves and describes `source` in a worker (`ModelStore.describe`:
    a checkpoint folder is converted once, here); only when that works does the source
    become the current model (and join the recent list). A folder that is no model
    keeps the previous model, and `failed` carries the resolver's message, which says
    what a model folder holds. A newer `open` supersedes an older one still running.

    Whatever makes a source current (this, or `ModelStore.set_source` directly, as the
    fine-tuning tab does with a model it just saved), the opener describes it and
    emits `described`, which the window uses for the model's name and its tab.

    Signals:
        described(object): the current model's `ModelDescription`.
        failed(str, str): `(source, message)`: the source could not be opened, or the
            current model could not be described.

    Args:
        models: the app's `ModelStore`.
        pool: the `WorkerPool` to run on (the inference pool: loads and predictions
            then never overlap).
        parent: the owning QObject.
    """

    described = Signal(object)
    failed = Signal(str, str)

    def __init__(self, models, pool, parent=None):
        super().__init__(parent)
        self.models = models
        self._opening = None
        self._describing = None
        self._open_runner = LatestRequestRunner(pool, delay_ms=0, parent=self)
        self._open_runner.result.connect(self._open_checked)
        self._open_runner.error.connect(self._open_failed)
        self._describe_runner = LatestRequestRunner(pool, delay_ms=0, parent=self)
        self._describe_runner.result.connect(self._current_described)
        self._describe_runner.error.connect(self._describe_failed)
        models.source_changed.connect(self.describe_current)

    @property
    def opening(self):
        """The source being checked, or None."""
        return self._opening

    def open(self, source):
        """Checks `source` in a worker; makes it the current model if it is one."""
        self._opening = str(source)
        self._open_runner.submit(self.models.describe, self._opening)

    @Slot()
    def describe_current(self):
        """Describes the current model (in a worker); `described` follows."""
        self._describing = self.models.source
        self._describe_runner.submit(self.models.describe, self._describing)

    @Slot(object)
    def _open_checked(self, description):
        self._opening = None
        unchanged = description.source == self.models.source
        self.models.set_source(description.source)  # also puts it first in Recent
        if unchanged:
            self.described.emit(description)

    @Slot(str)
    def _open_failed(self, message):
        source, self._opening = self._opening, None
        self.failed.emit(source, message)

    @Slot(object)
    def _current_described(self, description):
        if description.source == self.models.source:
            self.described.emit(description)

    @Slot(str)
    def _describe_failed(self, message):
        if self._describing == self.models.source:
            self.failed.emit(self._describing, message)
