"""A classifier's labels and their probabilities as a Qt table, most probable first."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont

from kbert_gui.widgets.probability_text import probability_text
from kbert_gui.widgets.row_table_model import RowTableModel

# The probability (a float in [0, 1]) of a row, for `ProbabilityBarDelegate`.
PROBABILITY_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMNS = ("Label", "Probability")
LABEL_COLUMN, PROBABILITY_COLUMN = range(len(COLUMNS))


class LabelProbabilityModel(RowTableModel):
    """Rows `(label, probability)` of a `kbert.inference.Classification`, sorted by
    probability (ties in class order); the predicted label is bold.

    The probability column shows "87.3 %" and holds the float under
    `PROBABILITY_ROLE`; its tooltip has the exact value.

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._columns = COLUMNS
        self._predicted = None

    def set_classification(self, classification):
        """Shows `classification` (a `Classification`, or None to clear)."""
        self.beginResetModel()
        if classification is None:
            self._rows, self._predicted = (), None
        else:
            probabilities = list(classification.probabilities.items())
            order = sorted(range(len(probabilities)), key=lambda index: -probabilities[index][1])
            self._rows = tuple(probabilities[index] for index in order)
            self._predicted = classification.label
        self.endResetModel()

    def clear(self):
        self.set_classification(None)

    def rows(self):
        """The shown `(label, probability)` pairs, in order."""
        return list(self._rows)

    def cell_data(self, row, column, role):
        label, probability = self._rows[row]
        if role == Qt.ItemDataRole.DisplayRole:
            return label if column == LABEL_COLUMN else probability_text(probability)
        if role == PROBABILITY_ROLE:
            return float(probability)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{label}: {probability:.6f}"
        if role == Qt.ItemDataRole.FontRole and label == self._predicted:
            font = QFont()
            font.setBold(True)
            return font
        return None
