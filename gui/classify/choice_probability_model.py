"""A multiple-choice model's endings and their probabilities as a Qt table, in ending order."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont

from kbert_gui.classify.label_probability_model import PROBABILITY_ROLE
from kbert_gui.widgets.row_table_model import RowTableModel

COLUMNS = ("", "Ending", "Probability")
MARK_COLUMN, ENDING_COLUMN, PROBABILITY_COLUMN = range(len(COLUMNS))
# What marks the chosen ending's row.
CHOSEN_MARK = "✓"


class ChoiceProbabilityModel(RowTableModel):
    """Rows `(ending, probability)` of a `kbert.inference.Choice`, in the order the
    endings were given (row numbers are ending numbers), the chosen one marked ✓ and
    bold.

    The probability column shows "87.3 %" and holds the float under
    `PROBABILITY_ROLE` (for `ProbabilityBarDelegate`); its tooltip has the exact value.

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._columns = COLUMNS
        self._chosen = None

    def set_choice(self, choice):
        """Shows `choice` (a `Choice`, or None to clear)."""
        self.beginResetModel()
        if choice is None:
            self._rows, self._chosen = (), None
        else:
            self._rows = tuple(zip(choice.endings, choice.probabilities))
            self._chosen = choice.index
        self.endResetModel()

    def clear(self):
        self.set_choice(None)

    def rows(self):
        """The shown `(ending, probability)` pairs, in ending order."""
        return list(self._rows)

    def chosen_row(self):
        """The row of the chosen ending, or None."""
        return self._chosen

    def cell_data(self, row, column, role):
        ending, probability = self._rows[row]
        chosen = row == self._chosen
        if role == Qt.ItemDataRole.DisplayRole:
            if column == MARK_COLUMN:
                return CHOSEN_MARK if chosen else ""
            return ending if column == ENDING_COLUMN else f"{100 * probability:.1f} %"
        if role == PROBABILITY_ROLE:
            return float(probability)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"Ending {row + 1}{' (chosen)' if chosen else ''}: {probability:.6f}\n{ending}"
        if role == Qt.ItemDataRole.FontRole and chosen:
            font = QFont()
            font.setBold(True)
            return font
        return None
