"""The scores of a finished run: one row per epoch, the best epoch in bold."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtGui import QColor
from PySide6.QtGui import QFont

from kbert_gui.services.score_words import METRIC_NAMES
from kbert_gui.services.score_words import score_text
from kbert_gui.widgets import style
from kbert_gui.widgets.row_table_model import RowTableModel

BEST_BACKGROUND = QColor(style.BEST_ROW_BACKGROUND)
# Readable titles of the logs `FineTuner` and `PretrainingLoop` report.
TITLES = {key: name[0].upper() + name[1:] for key, name in METRIC_NAMES.items()}


class EvaluationTableModel(RowTableModel):
    """Rows of logs (dicts of numbers), e.g. a `FineTuningResult.history`.

    Columns are the keys in the order they first appear; the row of the best epoch
    (`best_row`) is bold on a green background; its tooltip says why.

    Attributes:
        in_percent: whether the scores are percentages already (a SQuAD run's), read
            at the next `set_rows`.

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._best_row = None
        self._best_reason = ""
        self.in_percent = False

    def set_rows(self, rows, best_row=None, best_reason=""):
        """Shows `rows` (dicts); `best_row` is the index to highlight, or None."""
        self.beginResetModel()
        keys = []
        for row in rows:
            keys.extend(key for key in row if key not in keys)
        self._columns = tuple(keys)
        self._rows = tuple(dict(row) for row in rows)
        self._best_row = best_row
        self._best_reason = best_reason
        self.endResetModel()

    def clear(self):
        self.set_rows(())

    @property
    def keys(self):
        return self._columns

    @property
    def best_row(self):
        return self._best_row

    def value(self, row, key):
        return self._rows[row].get(key)

    def records(self):
        """The rows as given (dicts of the exact values), in order."""
        return [dict(row) for row in self._rows]

    def cell_data(self, row, column, role):
        key = self._columns[column]
        value = self._rows[row].get(key)
        best = row == self._best_row
        if role == Qt.ItemDataRole.DisplayRole:
            return format_value(key, value, self.in_percent)
        if role in NUMBER_ROLES:
            return number_cell_style(role, best)
        if role == Qt.ItemDataRole.ToolTipRole:
            exact = "" if value is None else repr(value)
            return f"{exact}\n{self._best_reason}".strip() if best else exact or None
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        # The title is also the tooltip: a narrow column elides it.
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        if orientation == Qt.Orientation.Horizontal:
            if 0 <= section < len(self._columns):
                key = self._columns[section]
                return TITLES.get(key, key.replace("_", " ").capitalize())
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            return None
        return str(section + 1) if 0 <= section < len(self._rows) else None


NUMBER_ROLES = (
    Qt.ItemDataRole.TextAlignmentRole,
    Qt.ItemDataRole.FontRole,
    Qt.ItemDataRole.BackgroundRole,
)


def number_cell_style(role, best):
    """A table cell of numbers: right-aligned; on the best row, bold on green."""
    if role == Qt.ItemDataRole.TextAlignmentRole:
        return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if role == Qt.ItemDataRole.FontRole and best:
        font = QFont()
        font.setBold(True)
        return font
    if role == Qt.ItemDataRole.BackgroundRole and best:
        return QBrush(BEST_BACKGROUND)
    return None


def format_value(key, value, in_percent=False):
    """A score or setting as a cell shows it (`score_text`: "87.5 %", "–" for None)."""
    return score_text(key, value, in_percent)
