"""The rows of an evaluation: one per example, gold beside prediction."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtGui import QColor

from kbert_gui.widgets import style
from kbert_gui.widgets.row_table_model import RowTableModel

WRONG_BACKGROUND = QColor(style.ERROR.background)
TITLES = {
    "index": "#",
    "gold": "Gold",
    "predicted": "Predicted",
    "probability": "Probability",
    "correct": "Correct",
    "gold_entities": "Gold entities",
    "predicted_entities": "Predicted entities",
    "exact_match": "Exact match",
    "f1": "F1",
    "gold_ending": "Gold ending",
    "predicted_ending": "Chosen ending",
}
# Shown in the tooltips and exports only: a tagger's tags per word are long and its
# entities say the same; a multiple-choice row's endings are in its tooltip.
HIDDEN = {
    "token-classification": ("gold", "predicted"),
    "multiple-choice": ("endings",),
}


class PredictionTableModel(RowTableModel):
    """An `EvaluationPredictions`' rows as a table, without a widget per row.

    Each cell shows its value in short (lists joined, probabilities to three places);
    the tooltip gives it in full. `sort` reorders the rows themselves (numbers as
    numbers, texts as texts); rows the model got wrong have a light red background.

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._task = None

    def set_predictions(self, predictions):
        """Shows the rows of `predictions` (an `EvaluationPredictions`)."""
        hidden = HIDDEN.get(predictions.task, ())
        self.beginResetModel()
        self._task = predictions.task
        self._columns = tuple(column for column in predictions.columns if column not in hidden)
        self._rows = predictions.rows
        self.endResetModel()

    @property
    def keys(self):
        """The keys of the shown columns, in order."""
        return self._columns

    def row(self, row):
        """The row `row` as kbert gave it (a dict)."""
        return self._rows[row]

    def rows(self):
        return self._rows

    def sort(self, column, order=Qt.SortOrder.AscendingOrder):
        """Reorders the rows by `column` in one Python sort (10,000 rows: milliseconds,
        where a proxy comparing cells through `data` takes seconds)."""
        if not 0 <= column < len(self._columns):
            return
        key = self._columns[column]
        self.layoutAboutToBeChanged.emit()
        keys = [_sort_key(row[key]) for row in self._rows]
        order_of_rows = sorted(
            range(len(keys)), key=keys.__getitem__, reverse=order == Qt.SortOrder.DescendingOrder
        )
        new_row = {old: new for new, old in enumerate(order_of_rows)}
        self._rows = tuple(self._rows[row] for row in order_of_rows)
        persistent = self.persistentIndexList()
        self.changePersistentIndexList(
            persistent,
            [self.index(new_row[index.row()], index.column()) for index in persistent],
        )
        self.layoutChanged.emit()

    def cell_data(self, row, column, role):
        key = self._columns[column]
        record = self._rows[row]
        value = record[key]
        if role == Qt.ItemDataRole.DisplayRole:
            return display_text(key, value)
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip_text(record) if key in ("text", "context") else display_text(key, value)
        if role == Qt.ItemDataRole.BackgroundRole and record["correct"] is False:
            return QBrush(WRONG_BACKGROUND)
        if role == Qt.ItemDataRole.TextAlignmentRole and isinstance(value, (int, float)):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole or orientation != Qt.Orientation.Horizontal:
            return None
        if not 0 <= section < len(self._columns):
            return None
        key = self._columns[section]
        return TITLES.get(key, key.replace("_", " ").capitalize())


def display_text(key, value):
    """A cell's text: entities as "PER Alice Smith", lists joined, numbers rounded."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "✓" if value else "✗"
    if isinstance(value, float):
        return f"{value:.1f}" if key in ("exact_match", "f1") else f"{value:.3f}"
    if isinstance(value, list):
        if value and isinstance(value[0], list):
            return "; ".join(f"{entity[0]} {entity[3]}" for entity in value)
        return " | ".join(str(item) for item in value)
    return str(value)


def tooltip_text(record):
    """A row's full text: every text field of the example, then gold and prediction."""
    lines = []
    for key in ("text", "pair", "question", "context"):
        if key in record:
            lines.append(f"{key.capitalize()}: {record[key]}")
    for index, ending in enumerate(record.get("endings", ())):
        lines.append(f"Ending {index}: {ending}")
    for key in ("gold", "predicted"):
        lines.append(f"{TITLES[key]}: {display_text(key, record[key])}")
    return "\n".join(lines)


def _sort_key(value):
    # Numbers before texts, so a column of both (none there is) still sorts.
    if isinstance(value, (bool, int, float)):
        return (0, float(value), "")
    if value is None:
        return (0, -1.0, "")
    return (1, 0.0, display_text("", value).lower())
