"""The controls above the evaluation rows: errors only, gold and predicted class, confidence."""

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox
from PySide6.QtWidgets import QComboBox
from PySide6.QtWidgets import QDoubleSpinBox
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QToolButton
from PySide6.QtWidgets import QWidget

ANY = "Any"


class PredictionFilterBar(QWidget):
    """Filter controls; `changed(dict)` gives `PredictionFilterModel.set_filters`'s arguments.

    The gold and predicted choices are offered where a task has classes (classifiers,
    multiple choice: the ending index); `set_pair` sets both at once (a confusion-matrix
    cell) and `clear` shows every row again.

    Args:
        classes: the class values to offer, or () for none.
        parent: the parent widget.
    """

    changed = Signal(dict)

    def __init__(self, classes=(), parent=None):
        super().__init__(parent)
        self._classes = list(classes)
        self.errors_only = QCheckBox("Errors only")
        self.errors_only.setToolTip("Show only the examples the model got wrong.")
        self.gold = self._class_box("Show only examples of this gold class.")
        self.predicted = self._class_box("Show only examples predicted as this class.")
        self.low = self._probability_box(0.0, "Lowest probability of the prediction shown.")
        self.high = self._probability_box(1.0, "Highest probability of the prediction shown.")
        self.clear_button = QToolButton()
        self.clear_button.setText("Show all")
        self.clear_button.setToolTip("Clear every filter.")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.errors_only)
        if self._classes:
            layout.addWidget(QLabel("Gold:"))
            layout.addWidget(self.gold)
            layout.addWidget(QLabel("Predicted:"))
            layout.addWidget(self.predicted)
        else:
            self.gold.hide()
            self.predicted.hide()
        layout.addWidget(QLabel("Probability from"))
        layout.addWidget(self.low)
        layout.addWidget(QLabel("to"))
        layout.addWidget(self.high)
        layout.addWidget(self.clear_button)
        layout.addStretch(1)
        self.errors_only.toggled.connect(self._emit)
        self.gold.currentIndexChanged.connect(self._emit)
        self.predicted.currentIndexChanged.connect(self._emit)
        self.low.valueChanged.connect(self._emit)
        self.high.valueChanged.connect(self._emit)
        self.clear_button.clicked.connect(self.clear)

    def _class_box(self, tooltip):
        box = QComboBox()
        box.addItem(ANY)
        for value in self._classes:
            box.addItem(str(value))
        box.setToolTip(tooltip)
        return box

    def _probability_box(self, value, tooltip):
        box = QDoubleSpinBox()
        box.setRange(0.0, 1.0)
        box.setDecimals(2)
        box.setSingleStep(0.05)
        box.setValue(value)
        box.setToolTip(tooltip)
        return box

    def filters(self):
        """The filters the controls show, as `PredictionFilterModel.set_filters` takes them."""
        return {
            "errors_only": self.errors_only.isChecked(),
            "gold": self._chosen(self.gold),
            "predicted": self._chosen(self.predicted),
            "low": self.low.value(),
            "high": self.high.value(),
        }

    def _chosen(self, box):
        index = box.currentIndex()
        return self._classes[index - 1] if index > 0 else None

    def set_pair(self, gold, predicted):
        """Shows only the examples of class `gold` predicted as `predicted`."""
        self._set_quietly(
            lambda: (
                self.errors_only.setChecked(False),
                self.gold.setCurrentIndex(self._classes.index(gold) + 1),
                self.predicted.setCurrentIndex(self._classes.index(predicted) + 1),
            )
        )

    def clear(self):
        """Every row in view."""
        self._set_quietly(
            lambda: (
                self.errors_only.setChecked(False),
                self.gold.setCurrentIndex(0),
                self.predicted.setCurrentIndex(0),
                self.low.setValue(0.0),
                self.high.setValue(1.0),
            )
        )

    def _set_quietly(self, change):
        # One `changed` for several controls, so the rows are filtered once.
        controls = (self.errors_only, self.gold, self.predicted, self.low, self.high)
        for control in controls:
            control.blockSignals(True)
        try:
            change()
        finally:
            for control in controls:
                control.blockSignals(False)
        self._emit()

    def _emit(self, *_):
        self.changed.emit(self.filters())
