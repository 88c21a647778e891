"""The window's busy indicator while a model is opened, converted or loaded."""

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QProgressBar
from PySide6.QtWidgets import QWidget

from kbert_gui.widgets import style
from kbert_gui.widgets.elided_label import ElidedLabel


class ModelLoadingIndicator(QWidget):
    """A moving bar and the current step, shown while a `ModelStore` loads something.

    It follows the store's `loading_started` (the bar appears with what is loading),
    `loading_step` (kbert's own log line of the work, e.g. a conversion's "Reading
    ... as a huggingface checkpoint") and `loading_finished` (hidden once every
    started load has finished). Loads found in the store's cache show nothing.

    Args:
        models: the app's `ModelStore`.
        parent: the parent widget.
    """

    def __init__(self, models, parent=None):
        super().__init__(parent)
        self.setObjectName("modelLoadingIndicator")
        self._running = 0
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)  # no end known: the bar moves to and fro
        self.bar.setTextVisible(False)
        self.bar.setFixedWidth(self.fontMetrics().averageCharWidth() * 10)
        self.bar.setMaximumHeight(self.fontMetrics().height())
        self.step_label = ElidedLabel(minimum_characters=10)
        self.step_label.setObjectName("loadingStep")
        self.step_label.setStyleSheet(style.HINT_STYLE)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 0, 8, 0)
        layout.setSpacing(6)
        layout.addWidget(self.bar)
        layout.addWidget(self.step_label, 1)
        self.hide()
        models.loading_started.connect(self._started)
        models.loading_step.connect(self._step)
        models.loading_finished.connect(self._finished)

    @property
    def step(self):
        """The line shown beside the bar."""
        return self.step_label.text()

    @Slot(str)
    def _started(self, message):
        self._running += 1
        self._step(message)
        self.show()

    @Slot(str)
    def _step(self, message):
        self.step_label.setText(message)
        self.step_label.setToolTip(message)

    @Slot()
    def _finished(self):
        self._running = max(self._running - 1, 0)
        if self._running == 0:
            self.hide()
