"""A read-only table of rows: Qt's counts and index checks, once for every such model."""

from PySide6.QtCore import QAbstractTableModel
from PySide6.QtCore import QModelIndex
from PySide6.QtCore import Qt


class RowTableModel(QAbstractTableModel):
    """A flat table of `_rows` under `_columns` (tuples the subclass fills).

    It answers Qt's `rowCount` and `columnCount`, `data` for any index inside the
    table by the subclass's `cell_data(row, column, role)` (an index outside it gets
    None), and `headerData`: the column's entry of `_columns` as its title, rows
    numbered from 1.

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

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self._columns):
            return str(self._columns[section])
        if orientation == Qt.Orientation.Vertical and 0 <= section < len(self._rows):
            return str(section + 1)
        return None

    def cell_data(self, row, column, role):
        """What the cell at `row`, `column` (both inside the table) holds for `role`."""
        raise NotImplementedError(f"{type(self).__name__} must define `cell_data`.")
