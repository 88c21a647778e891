"""The preview table of a training file, with the rows kbert's reader rejects marked."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtGui import QColor

from kbert_gui.widgets import style
from kbert_gui.widgets.row_table_model import RowTableModel

# Longest cell text shown; the tooltip holds the whole value.
MAX_CELL_CHARACTERS = 300
ERROR_BACKGROUND = QColor(style.ERROR.background)
ERROR_FOREGROUND = QColor(style.ERROR.text)


class DataPreviewModel(RowTableModel):
    """Rows of a data file as strings; a row with an error is red and says why.

    The vertical header shows the file line where each row starts, so a message such
    as "train.csv:14: empty label" points at a visible row. Long cells are shortened
    (with "…"); their tooltip holds the whole text. A row with an error has a red
    background and the error as its tooltip.

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._lines = ()
        self._errors = {}

    def set_rows(self, headers, rows, lines=None, errors=None):
        """Shows `rows` (sequences of strings) under `headers`.

        Args:
            headers: the column titles.
            rows: one sequence of cell strings per row (shorter rows are padded).
            lines: the file line of each row (None entries: unknown); default 1, 2, ...
            errors: `{line: message}` for rejected rows.
        """
        self.beginResetModel()
        self._columns = tuple(str(header) for header in headers)
        width = len(self._columns)
        self._rows = tuple(
            tuple(str(cell) for cell in row[:width]) + ("",) * (width - len(row)) for row in rows
        )
        self._lines = tuple(lines) if lines is not None else tuple(range(1, len(self._rows) + 1))
        self._errors = dict(errors or {})
        self.endResetModel()

    def clear(self):
        self.set_rows((), ())

    def error_rows(self):
        """Indices of the rows that carry an error."""
        return [row for row, line in enumerate(self._lines) if line in self._errors]

    def row_of_line(self, line):
        """The row showing file line `line`, or None."""
        return self._lines.index(line) if line in self._lines else None

    def row_error(self, row):
        """The error message of `row`, or None."""
        return self._errors.get(self._lines[row])

    # --- Cells and headers ----------------------------------------------------------

    def cell_data(self, row, column, role):
        text = self._rows[row][column]
        error = self.row_error(row)
        if role == Qt.ItemDataRole.DisplayRole:
            flat = " ".join(text.split()) if "\n" in text or "\r" in text else text
            return (
                flat if len(flat) <= MAX_CELL_CHARACTERS else flat[: MAX_CELL_CHARACTERS - 1] + "…"
            )
        if role == Qt.ItemDataRole.ToolTipRole:
            if error is not None:
                return error
            return text if len(text) > 60 or "\n" in text else None
        if role == Qt.ItemDataRole.BackgroundRole and error is not None:
            return QBrush(ERROR_BACKGROUND)
        if role == Qt.ItemDataRole.ForegroundRole and error is not None:
            return QBrush(ERROR_FOREGROUND)
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal:
            if role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(self._columns):
                return self._columns[section]
            return None
        if not 0 <= section < len(self._rows):
            return None
        line = self._lines[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return str(line) if line is not None else str(section + 1)
        if role == Qt.ItemDataRole.ToolTipRole:
            if line in self._errors:
                return self._errors[line]
            return f"line {line} of the file" if line is not None else f"record {section + 1}"
        if role == Qt.ItemDataRole.ForegroundRole and line in self._errors:
            return QBrush(ERROR_FOREGROUND)
        return None
