"""A coloured background over a span of a text editor, as a Qt extra selection."""

from PySide6.QtGui import QColor
from PySide6.QtGui import QTextCharFormat
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QTextEdit

from kbert_gui.widgets import style


def span_selection(document, qt_start, qt_end, background):
    """An `ExtraSelection` painting Qt positions `[qt_start, qt_end)` of `document` in
    `background` ("#rrggbb"), with `style.INK` text; the text itself is not touched."""
    cursor = QTextCursor(document)
    cursor.setPosition(qt_start)
    cursor.setPosition(qt_end, QTextCursor.MoveMode.KeepAnchor)
    selection = QTextEdit.ExtraSelection()
    selection.cursor = cursor
    selection.format = QTextCharFormat()
    selection.format.setBackground(QColor(background))
    selection.format.setForeground(QColor(style.INK))
    return selection
