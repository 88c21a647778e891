"""A table of a few short columns (scores per epoch, per trial) whose titles and values
are never cut: titles wrap onto a second line before a scroll bar appears."""

from PySide6.QtCore import QRect
from PySide6.QtCore import Qt
from PySide6.QtCore import QTimer
from PySide6.QtGui import QFont
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QHeaderView
from PySide6.QtWidgets import QStyle
from PySide6.QtWidgets import QTableView

# The rows measured for the columns' widths: scores tables hold a row per epoch or trial.
MEASURED_ROWS = 200
# A cell's text margins and grid line (Qt's item delegate: 3 px a side, and the line).
CELL_MARGIN = 9
ROW_HEIGHT = 22
WRAP = int(Qt.AlignmentFlag.AlignCenter) | int(Qt.TextFlag.TextWordWrap)


class ScoreTableView(QTableView):
    """A `QTableView` whose columns share its width so that nothing is cut.

    Each column is at least as wide as its widest value (in bold, as a best row shows
    it) and its title's longest word; the room left is shared, a column first getting
    what its title needs on one line. Titles that still do not fit on one line wrap at
    their spaces ("Training / loss") and the header grows to their lines. Only when
    even that does not fit the width does a horizontal scroll bar appear. The columns
    follow the model (reset, rows added, values changed) and the view's width.

    Args:
        model: the table model.
        name: the Qt object name.
        parent: the parent widget.
    """

    def __init__(self, model, name, parent=None):
        super().__init__(parent)
        self.setObjectName(name)
        self.setModel(model)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        self.setAlternatingRowColors(True)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(1)
        header.setDefaultAlignment(Qt.AlignmentFlag(WRAP))
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self._refit = QTimer(self)
        self._refit.setSingleShot(True)
        self._refit.setInterval(0)
        self._refit.timeout.connect(self.fit_columns)
        for signal in (
            model.modelReset,
            model.rowsInserted,
            model.dataChanged,
            model.layoutChanged,
            model.headerDataChanged,
            self.verticalScrollBar().rangeChanged,  # its bar takes or gives back width
        ):
            signal.connect(self._refit.start)

    def resizeEvent(self, event):
        super().resizeEvent(event)
        self.fit_columns()

    def fit_columns(self):
        """Shares the view's width among the columns (see the class) and sizes the header."""
        count = self.model().columnCount()
        if not count:
            return
        header = self.horizontalHeader()
        titles = [self._title(column) for column in range(count)]
        least, full = zip(*(self._widths(column, titles[column]) for column in range(count)))
        widths = share_width(least, full, self.viewport().width())
        for column, width in enumerate(widths):
            header.resizeSection(column, width)
        lines = max(self._title_lines(title, width) for title, width in zip(titles, widths))
        metrics = header.fontMetrics()
        one_line = header.sizeHint().height()
        header.setMinimumHeight(one_line + (lines - 1) * metrics.lineSpacing())

    def _title(self, column):
        title = self.model().headerData(column, Qt.Orientation.Horizontal)
        return "" if title is None else str(title)

    def _title_margin(self):
        header = self.horizontalHeader()
        return 2 * header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header) + 2

    def _widths(self, column, title):
        """`(least, full)`: the column's width with its title wrapped, and on one line."""
        metrics = self.horizontalHeader().fontMetrics()
        margin = self._title_margin()
        words = max((metrics.horizontalAdvance(word) for word in title.split()), default=0)
        one_line = metrics.horizontalAdvance(title) + margin
        values = self._values_width(column) + CELL_MARGIN
        return max(words + margin, values), max(one_line, values)

    def _values_width(self, column):
        font = QFont(self.font())
        font.setBold(True)
        metrics = QFontMetrics(font)
        model = self.model()
        rows = min(model.rowCount(), MEASURED_ROWS)
        texts = (model.index(row, column).data() for row in range(rows))
        widths = (metrics.horizontalAdvance(str(text)) for text in texts if text is not None)
        return max(widths, default=0)

    def _title_lines(self, title, width):
        metrics = self.horizontalHeader().fontMetrics()
        room = QRect(0, 0, max(width - self._title_margin(), 1), 10_000)
        height = metrics.boundingRect(room, WRAP, title).height()
        return max(round(height / metrics.lineSpacing()), 1)


def share_width(least, full, available):
    """Column widths from each column's `least` and `full` (one-line title) widths: the
    full widths and an even share of what is left where they fit in `available`;
    else the least widths and the rest shared in proportion to what each lacks; else
    the least widths (a scroll bar shows the rest).

    Example:

    >>> share_width([40, 50], [60, 50], 130)
    [70, 60]
    >>> share_width([40, 50], [60, 50], 100)
    [50, 50]
    """
    least, full = list(least), list(full)
    if sum(full) <= available:
        extra, count = available - sum(full), len(full)
        return [
            width + extra // count + (index < extra % count) for index, width in enumerate(full)
        ]
    lacking = [wide - narrow for narrow, wide in zip(least, full)]
    room = available - sum(least)
    if room <= 0 or not sum(lacking):
        return least
    return [narrow + room * lack // sum(lacking) for narrow, lack in zip(least, lacking)]
