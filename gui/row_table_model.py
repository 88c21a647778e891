"""A read-only table of rows: Qt's counts and index checks, once for every such model."""

from PySide6.QtCore import QAbstractTableModel
from PySide6.QtCore import QModelIndex
from PySide6.QtCore import Qt


class RowTableModel(QAbstractTableModel):
    """A flat table of `_rows` under `_columns` (tuples the subclass fills).

    It answers Qt's `rowCount` and `columnCount`, and `data` for any index inside the
    table by the subclass's `cell_data(row, column, role)`; an index outside it gets
    None.

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._columns = ()
        self._rows = ()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if (
            not index.isValid()
            or index.row() >= len(self._rows)
            or index.column() >= len(self._columns)
        ):
            return None
        return self.cell_data(index.row(), index.column(), role)

    def cell_data(self, row, column, role):
        """What the cell at `row`, `column` (both inside the table) holds for `role`."""
        raise NotImplementedError(f"{type(self).__name__} must define `cell_data`.")
