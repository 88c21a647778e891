"""A tagger's scores per entity type: precision, recall, F1 and support."""

from PySide6.QtCore import Qt

from kbert_gui.widgets.row_table_model import RowTableModel

COLUMNS = ("type", "precision", "recall", "f1", "support")
TITLES = ("Entity type", "Precision", "Recall", "F1", "Support")


class EntityTypeScoresModel(RowTableModel):
    """One row per entity type, from `EvaluationPredictions.entity_types`.

    Args:
        parent: the owning QObject.
    """

    def set_scores(self, entity_types):
        """Shows `entity_types`: dict type -> precision, recall, f1, support."""
        self.beginResetModel()
        self._columns = COLUMNS
        self._rows = tuple(
            (name, scores["precision"], scores["recall"], scores["f1"], scores["support"])
            for name, scores in entity_types.items()
        )
        self.endResetModel()

    def cell_data(self, row, column, role):
        value = self._rows[row][column]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{value:.3f}" if isinstance(value, float) else str(value)
        if role == Qt.ItemDataRole.TextAlignmentRole and column:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return TITLES[section] if 0 <= section < len(TITLES) else None
        return super().headerData(section, orientation, role)
