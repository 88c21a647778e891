"""A classifier's confusion matrix: gold classes down, predicted classes across."""

from PySide6.QtCore import QModelIndex
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtGui import QColor

from kbert_gui.widgets import style
from kbert_gui.widgets.row_table_model import RowTableModel

CORRECT_COLOR = QColor(style.BEST_ROW_BACKGROUND)
WRONG_COLOR = QColor(style.ERROR.background)


class ConfusionMatrixModel(RowTableModel):
    """Counts of examples per (gold, predicted) pair, from `EvaluationPredictions.confusion_matrix`.

    The diagonal (right) is green, the rest (wrong) red, each the deeper the larger
    its share of the gold class; `pair(index)` names a cell's classes.

    Args:
        parent: the owning QObject.
    """

    def set_matrix(self, labels, counts):
        """Shows `counts[i][j]`: examples of gold `labels[i]` predicted `labels[j]`."""
        self.beginResetModel()
        self._columns = tuple(labels)
        self._rows = tuple(tuple(row) for row in counts)
        self.endResetModel()

    def count(self, gold_row, predicted_column):
        return self._rows[gold_row][predicted_column]

    def cell(self, gold, predicted):
        """The index of the cell of `gold` predicted as `predicted`; invalid for a class
        that is not in the matrix (or None)."""
        if gold not in self._columns or predicted not in self._columns:
            return QModelIndex()
        return self.index(self._columns.index(gold), self._columns.index(predicted))

    def pair(self, index):
        """`(gold, predicted)` class names of the cell `index`."""
        return self._columns[index.row()], self._columns[index.column()]

    def cell_data(self, row, column, role):
        count = self._rows[row][column]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{count:,}"
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignCenter)
        if role == Qt.ItemDataRole.BackgroundRole and count:
            share = count / max(sum(self._rows[row]), 1)
            color = QColor(CORRECT_COLOR if row == column else WRONG_COLOR)
            color.setAlphaF(0.35 + 0.65 * share)
            return QBrush(color)
        if role == Qt.ItemDataRole.ToolTipRole:
            gold, predicted = self._columns[row], self._columns[column]
            return f"{count:,} examples of gold {gold!r} predicted {predicted!r}; click to list them."
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.ToolTipRole and 0 <= section < len(self._columns):
            side = "predicted" if orientation == Qt.Orientation.Horizontal else "gold"
            return f"{side}: {self._columns[section]}"
        if role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(self._columns):
            return str(self._columns[section])
        return None
