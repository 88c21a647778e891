"""Right-click on any table or tree: copy the row, or the whole table as CSV."""

import csv
import io

from PySide6.QtCore import QModelIndex
from PySide6.QtCore import QObject
from PySide6.QtCore import Qt
from PySide6.QtCore import Slot
from PySide6.QtGui import QAction
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu


class TableContextMenu(QObject):
    """The context menu of a `QTableView` or `QTreeView`: "Copy row" and "Copy as CSV".

    "Copy row" copies the selected rows (or the row under the mouse when it is not
    selected) as tab-separated text, one line per row, so that it pastes into a
    spreadsheet cell by cell; "Copy as CSV" copies the header and every row of the
    view's model. A tree's rows are walked depth first, children after their parent.
    The text is what the view shows (`DisplayRole`), so what is pasted is what was read.

    Attach it once: `TableContextMenu(view)`. It is a child of the view and lives as
    long as it; `TableContextMenu.of(view)` finds it again (the window's Edit > Copy
    copies the focused view's selected rows through it).

    Args:
        view: the `QAbstractItemView` (a table or a tree).
    """

    def __init__(self, view):
        super().__init__(view)
        self.view = view
        self.copy_row_action = QAction("Copy row", view)
        self.copy_row_action.triggered.connect(self.copy_rows)
        self.copy_csv_action = QAction("Copy as CSV", view)
        self.copy_csv_action.triggered.connect(self.copy_as_csv)
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self._show_menu)
        self._clicked_row = None

    @staticmethod
    def of(view):
        """The `TableContextMenu` attached to `view`, or None."""
        return view.findChild(TableContextMenu, options=Qt.FindChildOption.FindDirectChildrenOnly)

    # --- What the actions copy -----------------------------------------------------

    def header(self):
        """The column titles of the view's model."""
        model = self.view.model()
        return [
            _text(model.headerData(column, Qt.Orientation.Horizontal))
            for column in range(model.columnCount())
        ]

    def rows(self, indexes=None):
        """The cells' texts of each row; `indexes` (first-column indexes) default to all."""
        model = self.view.model()
        if indexes is None:
            indexes = list(_walk(model, QModelIndex()))
        return [
            [
                _text(model.data(index.siblingAtColumn(column)))
                for column in range(model.columnCount(index.parent()))
            ]
            for index in indexes
        ]

    def selected_rows(self):
        """First-column indexes of the selected rows in view order, else the clicked row."""
        selection = self.view.selectionModel()
        selected = [] if selection is None else selection.selectedRows()
        if not selected and selection is not None:
            # Cell selections (a table without row selection) count by their row.
            selected = {index.siblingAtColumn(0) for index in selection.selectedIndexes()}
        if self._clicked_row is not None and self._clicked_row not in selected:
            return [self._clicked_row]
        order = {index: position for position, index in enumerate(_walk(self.view.model()))}
        return sorted(selected, key=lambda index: order.get(index, 0))

    @Slot()
    def copy_rows(self):
        """Copies the selected rows (or the clicked one) as tab-separated lines."""
        rows = self.rows(self.selected_rows())
        self._clicked_row = None
        if rows:
            lines = ["\t".join(" ".join(cell.split()) for cell in row) for row in rows]
            QGuiApplication.clipboard().setText("\n".join(lines))

    @Slot()
    def copy_as_csv(self):
        """Copies the header and every row as CSV."""
        self._clicked_row = None
        QGuiApplication.clipboard().setText(csv_text(self.header(), self.rows()))

    # --- The menu ------------------------------------------------------------------

    @Slot(object)
    def _show_menu(self, position):
        index = self.view.indexAt(position)
        self._clicked_row = index.siblingAtColumn(0) if index.isValid() else None
        has_rows = self.view.model() is not None and self.view.model().rowCount() > 0
        self.copy_row_action.setEnabled(self._clicked_row is not None or bool(self.selected_rows()))
        self.copy_csv_action.setEnabled(has_rows)
        menu = QMenu(self.view)
        menu.addAction(self.copy_row_action)
        menu.addAction(self.copy_csv_action)
        menu.exec(self.view.viewport().mapToGlobal(position))
        self.copy_row_action.setEnabled(True)
        self._clicked_row = None


def csv_text(columns, rows):
    """`columns` and `rows` (lists of cells) as CSV text, one line per row."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


def _walk(model, parent=QModelIndex()):
    """First-column indexes of every row under `parent`, depth first."""
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        yield index
        yield from _walk(model, index)


def _text(value):
    return "" if value is None else str(value)
