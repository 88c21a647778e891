"""The scores of a finished run: one row per epoch, the best epoch in bold."""

from PySide6.QtCore import QAbstractTableModel
from PySide6.QtCore import QModelIndex
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtGui import QColor
from PySide6.QtGui import QFont

BEST_BACKGROUND = QColor("#e6f4ea")
# Readable titles of the logs `FineTuner` and `PretrainingLoop` report.
TITLES = {
    "epoch": "Epoch",
    "loss": "Training loss",
    "learning_rate": "Learning rate",
    "accuracy": "Accuracy",
    "macro_f1": "Macro F1",
    "matthews_corrcoef": "MCC",
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1",
    "exact_match": "Exact match",
    "mlm_loss": "MLM loss",
    "mlm_accuracy": "MLM accuracy",
    "nsp_loss": "NSP loss",
    "nsp_accuracy": "NSP accuracy",
}


class EvaluationTableModel(QAbstractTableModel):
    """Rows of logs (dicts of numbers), e.g. a `FineTuningResult.history`.

    Columns are the keys in the order they first appear; the row of the best epoch
    (`best_row`) is bold on a green background; its tooltip says why.

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._keys = ()
        self._rows = ()
        self._best_row = None
        self._best_reason = ""

    def set_rows(self, rows, best_row=None, best_reason=""):
        """Shows `rows` (dicts); `best_row` is the index to highlight, or None."""
        self.beginResetModel()
        keys = []
        for row in rows:
            keys.extend(key for key in row if key not in keys)
        self._keys = tuple(keys)
        self._rows = tuple(dict(row) for row in rows)
        self._best_row = best_row
        self._best_reason = best_reason
        self.endResetModel()

    def clear(self):
        self.set_rows(())

    @property
    def keys(self):
        return self._keys

    @property
    def best_row(self):
        return self._best_row

    def value(self, row, key):
        return self._rows[row].get(key)

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._keys)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if (
            not index.isValid()
            or index.row() >= len(self._rows)
            or index.column() >= len(self._keys)
        ):
            return None
        key = self._keys[index.column()]
        value = self._rows[index.row()].get(key)
        best = index.row() == self._best_row
        if role == Qt.ItemDataRole.DisplayRole:
            return _format(key, value)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole and best:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.BackgroundRole and best:
            return QBrush(BEST_BACKGROUND)
        if role == Qt.ItemDataRole.ToolTipRole:
            exact = "" if value is None else repr(value)
            return f"{exact}\n{self._best_reason}".strip() if best else exact or None
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            if 0 <= section < len(self._keys):
                key = self._keys[section]
                return TITLES.get(key, key.replace("_", " ").capitalize())
            return None
        return str(section + 1) if 0 <= section < len(self._rows) else None


def _format(key, value):
    if value is None:
        return "–"
    if isinstance(value, (bool, int)):
        return str(value)
    if isinstance(value, float):
        if key == "learning_rate":
            return f"{value:.3g}"
        return f"{value:.4f}" if abs(value) < 10 else f"{value:.2f}"
    return str(value)
