"""A tagger's entity spans as a Qt table: type (with its colour), text, score, characters."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from kbert_gui.widgets.probability_text import probability_text
from kbert_gui.widgets.row_table_model import RowTableModel

# The row's `kbert.inference.EntitySpan`.
SPAN_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMNS = ("Entity", "Text", "Score", "Characters")
LABEL_COLUMN, TEXT_COLUMN, SCORE_COLUMN, CHARACTERS_COLUMN = range(len(COLUMNS))


class EntitySpanModel(RowTableModel):
    """Rows of `kbert.inference.EntitySpan`s in text order.

    Columns: the entity type, with a swatch of the colour it is highlighted in; the
    text; the score (the mean probability of its words' tags); the characters
    `start–end` (end exclusive) in the tagged text.

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._columns = COLUMNS
        self._colors = {}

    def set_entities(self, entities, colors):
        """Shows `entities`; `colors` maps each type to its "#rrggbb" highlight."""
        self.beginResetModel()
        self._rows = tuple(entities)
        self._colors = dict(colors)
        self.endResetModel()

    def clear(self):
        self.set_entities((), {})

    def entity(self, row):
        """The `EntitySpan` of `row`."""
        return self._rows[row]

    def cell_data(self, row, column, role):
        span = self._rows[row]
        if role == Qt.ItemDataRole.DisplayRole:
            if column == LABEL_COLUMN:
                return span.label
            if column == TEXT_COLUMN:
                return " ".join(span.text.split())
            if column == SCORE_COLUMN:
                return probability_text(span.score)
            return f"{span.start}–{span.end}"
        if role == Qt.ItemDataRole.DecorationRole and column == LABEL_COLUMN:
            color = self._colors.get(span.label)
            return QColor(color) if color else None
        numeric = column in (SCORE_COLUMN, CHARACTERS_COLUMN)
        if role == Qt.ItemDataRole.TextAlignmentRole and numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"“{span.text}”: {span.label}, score {span.score:.6f}"
        if role == SPAN_ROLE:
            return span
        return None
