"""The rows of an evaluation: one per example, gold beside prediction."""

import numpy
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtGui import QColor

from kbert_gui.widgets import style
from kbert_gui.widgets.row_table_model import RowTableModel

WRONG_BACKGROUND = QColor(style.ERROR.background)
WRONG_BRUSH = QBrush(WRONG_BACKGROUND)
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
# The roles `data` answers, looked up once: a paint asks ~10 roles of every cell in view.
DISPLAY = Qt.ItemDataRole.DisplayRole
TOOLTIP = Qt.ItemDataRole.ToolTipRole
BACKGROUND = Qt.ItemDataRole.BackgroundRole
ALIGNMENT = Qt.ItemDataRole.TextAlignmentRole
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
    "other_predicted": "Other",
    "other_probability": "Other's p",
    "agree": "Agree",
}
# What a short title stands for, shown over it.
TITLE_TOOLTIPS = {
    "probability": "The probability the model gives its predicted label",
    "other_predicted": "The label the other model predicts",
    "other_probability": "The probability the other model gives its predicted label",
    "agree": "Whether the two models predict the same label",
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
    the tooltip gives it in full. `sort` reorders the rows (numbers as numbers, texts
    as texts; equal values keep their order); rows the model got wrong have a light
    red background. The rows stay in file order (`records`); the table shows them
    through a permutation (`order`), so a sort is one NumPy argsort of a column's
    ranks, computed once per column.

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._task = None
        self._records = ()
        self._order = numpy.arange(0)
        self._positions = []
        self._ranks = {}

    def set_predictions(self, predictions):
        """Shows the rows of `predictions` (an `EvaluationPredictions`)."""
        hidden = HIDDEN.get(predictions.task, ())
        self.beginResetModel()
        self._task = predictions.task
        self._columns = tuple(column for column in predictions.columns if column not in hidden)
        self._records = self._rows = predictions.rows
        self._order = numpy.arange(len(self._records))
        self._positions = self._order.tolist()
        self._ranks = {}
        self.endResetModel()

    @property
    def keys(self):
        """The keys of the shown columns, in order."""
        return self._columns

    @property
    def records(self):
        """The rows in file order (dicts), whatever the sort."""
        return self._records

    @property
    def order(self):
        """Which record each table row shows: `records[order[row]]` (a NumPy array)."""
        return self._order

    def row(self, row):
        """The row `row` as kbert gave it (a dict)."""
        return self._records[self._positions[row]]

    def rows(self):
        return tuple(self._records[position] for position in self._positions)

    def replace_record(self, position, record):
        """Puts `record` (a dict) in place of the record `position` (file order): an
        example edited and predicted again keeps its row."""
        records = list(self._records)
        records[position] = record
        self._records = self._rows = tuple(records)
        self._ranks = {}
        row = self._positions.index(position)
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(self._columns) - 1))

    def sort(self, column, order=Qt.SortOrder.AscendingOrder):
        """Reorders the rows by `column`: one stable argsort of the column's ranks (in
        a descending sort too, equal values keep their order, as Python's sort does)."""
        if not 0 <= column < len(self._columns):
            return
        key = self._columns[column]
        if key not in self._ranks:
            self._ranks[key] = column_ranks([record[key] for record in self._records])
        ranks = self._ranks[key][self._order]
        if order == Qt.SortOrder.DescendingOrder:
            ranks = -ranks
        permutation = numpy.argsort(ranks, kind="stable")
        self.layoutAboutToBeChanged.emit()
        self._order = self._order[permutation]
        self._positions = self._order.tolist()
        persistent = self.persistentIndexList()
        if persistent:
            new_row = numpy.empty_like(permutation)
            new_row[permutation] = numpy.arange(len(permutation))
            self.changePersistentIndexList(
                persistent,
                [self.index(int(new_row[index.row()]), index.column()) for index in persistent],
            )
        self.layoutChanged.emit()

    def cell_data(self, row, column, role):
        return self.record_data(self._records[self._positions[row]], column, role)

    def record_data(self, record, column, role):
        """What the cell of `record` (a dict) in `column` holds for `role`."""
        key = self._columns[column]
        value = record[key]
        if role == DISPLAY:
            return display_text(key, value)
        if role == BACKGROUND:
            return WRONG_BRUSH if record["correct"] is False else None
        if role == ALIGNMENT:
            return RIGHT if isinstance(value, (int, float)) else None
        if role == TOOLTIP:
            return tooltip_text(record) if key in ("text", "context") else display_text(key, value)
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self._columns):
            return None
        key = self._columns[section]
        if role == TOOLTIP:
            return TITLE_TOOLTIPS.get(key)
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        return TITLES.get(key, key.replace("_", " ").capitalize())


def column_ranks(values):
    """Each value's rank in a sort of `values` (equal values share one): numbers and
    None (as -1) before texts, numbers by value, texts by their shown text in lower case."""
    groups, numbers, texts = [], [], []
    for value in values:
        if isinstance(value, (bool, int, float)):
            groups.append(0), numbers.append(float(value)), texts.append("")
        elif value is None:
            groups.append(0), numbers.append(-1.0), texts.append("")
        else:
            groups.append(1), numbers.append(0.0), texts.append(display_text("", value).lower())
    count = len(values)
    groups, numbers = numpy.array(groups, dtype=numpy.int8), numpy.array(numbers, dtype=float)
    texts = numpy.array(texts, dtype=str)
    ordered = numpy.lexsort((texts, numbers, groups))
    new_value = numpy.ones(count, dtype=bool)
    if count:
        sorted_keys = [keys[ordered] for keys in (groups, numbers, texts)]
        new_value[1:] = numpy.logical_or.reduce([keys[1:] != keys[:-1] for keys in sorted_keys])
    ranks = numpy.empty(count, dtype=numpy.int64)
    ranks[ordered] = numpy.cumsum(new_value) - 1
    return ranks


def display_text(key, value):
    """A cell's text: entities as "PER Alice Smith", lists joined, numbers rounded,
    counts with thousands separators."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "✓" if value else "✗"
    if isinstance(value, float):
        return f"{value:.1f}" if key in ("exact_match", "f1") else f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"  # a line of a long file: "1,606,296"
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
