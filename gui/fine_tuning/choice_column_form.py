"""Which columns of a multiple-choice file hold the context, the endings' start, the label."""

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.fine_tuning.column_mapping_form import column_box
from kbert_gui.fine_tuning.column_mapping_form import guess_column

# Usual names, most likely first (SWAG's own, then the JSON Lines form's).
CONTEXT_NAMES = ("sent1", "context", "startphrase", "question", "text")
START_NAMES = ("sent2", "start", "prefix")
LABEL_NAMES = ("label", "labels", "gold", "answer", "target")
# The start box's entry for endings that are whole on their own.
NO_START = "(none: the endings are whole)"


class ChoiceColumnForm(QWidget):
    """Combo boxes mapping a multiple-choice file's columns to the context, the start
    every ending continues (SWAG's `sent2`, or none) and the label (the index of the
    right ending); the `ending0`, `ending1`, ... columns are the endings.

    `set_columns(columns, csv_file)` offers a file's columns (a SWAG CSV's columns
    other than the endings, or a JSON Lines record's fields other than "context" and
    "endings", where only the label field is mapped) and guesses the mapping from
    their names; `mapping()` returns it as `kbert.finetuning.MultipleChoiceRecipe`
    takes it (`start_column` "" for none).

    Signals:
        mapping_changed(): the user (or `set_columns`) changed the mapping.
    """

    mapping_changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._columns = ()
        self._csv = True
        self._filling = False
        self._wanted = {}
        self.context_box = column_box(
            "contextColumn", "The column holding the context.", self._changed
        )
        self.start_box = column_box(
            "startColumn",
            "The column every ending continues (SWAG's sent2): it is put before each "
            "ending. None when the ending columns hold whole endings.",
            self._changed,
        )
        self.label_box = column_box(
            "choiceLabelColumn",
            "The column holding the index of the right ending (0, 1, …).",
            self._changed,
        )
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for label, box in (
            ("Context column:", self.context_box),
            ("Ending start:", self.start_box),
            ("Label column:", self.label_box),
        ):
            layout.addRow(label, box)
        self._layout = layout

    def _changed(self):
        if not self._filling:
            self.mapping_changed.emit()

    def columns(self):
        return self._columns

    def set_columns(self, columns, csv_file=True):
        """Offers `columns`, keeping the current choices where the names still exist;
        a JSON Lines file (`csv_file` False) maps its label field only."""
        columns = tuple(columns)
        if columns == self._columns and csv_file == self._csv:
            return
        boxes = (self.context_box, self.start_box, self.label_box)
        previous = {box: self._wanted.get(box, box.currentData()) for box in boxes}
        self._wanted = {}
        self._filling = True
        try:
            self._columns, self._csv = columns, csv_file
            for box, names, items in (
                (self.context_box, CONTEXT_NAMES, columns),
                (self.start_box, START_NAMES, ("",) + columns),
                (self.label_box, LABEL_NAMES, columns),
            ):
                box.clear()
                for item in items:
                    box.addItem(item or NO_START, item)
                box.setCurrentIndex(guess_column(items, previous[box], names, fallback=0))
        finally:
            self._filling = False
        self._layout.setRowVisible(self.context_box, csv_file)
        self._layout.setRowVisible(self.start_box, csv_file)
        self.mapping_changed.emit()

    def set_mapping(self, mapping):
        """Selects the columns of `mapping` (as `mapping()` returns it); names the file
        does not offer yet are chosen when it does (`set_columns`)."""
        for box, field in (
            (self.context_box, "context_column"),
            (self.start_box, "start_column"),
            (self.label_box, "label_column"),
        ):
            column = mapping.get(field)
            if isinstance(column, str):
                self._wanted[box] = column
                if box.findData(column) >= 0:
                    box.setCurrentIndex(box.findData(column))

    def mapping(self):
        """`{"context_column", "start_column", "label_column"}` for a CSV file,
        `{"label_column"}` for JSON Lines; None while there are no columns."""
        if not self._columns:
            return None
        label = self.label_box.currentData()
        if not self._csv:
            return {"label_column": label}
        return {
            "context_column": self.context_box.currentData(),
            "start_column": self.start_box.currentData(),
            "label_column": label,
        }

