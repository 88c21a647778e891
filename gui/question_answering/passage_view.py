"""An editable passage that highlights answer spans and shades token probabilities."""

from PySide6.QtCore import QEvent
from PySide6.QtCore import QPoint
from PySide6.QtCore import QRect
from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtGui import QPainter
from PySide6.QtGui import QTextCharFormat
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit
from PySide6.QtWidgets import QTextEdit
from PySide6.QtWidgets import QToolTip

from kbert_gui.question_answering.question_answering_format import passage_size_problem
from kbert_gui.question_answering.question_answering_format import utf8_size
from kbert_gui.widgets import style
from kbert_gui.widgets.probability_text import probability_text
from kbert_gui.widgets.qt_text_positions import QtTextPositions

ANSWER_BACKGROUND = QColor(style.ANSWER_BACKGROUND)
ANSWER_FOREGROUND = QColor(style.INK)


class PassageView(QPlainTextEdit):
    """The QA passage: the user pastes or edits it; answers are highlighted in it.

    All offsets are Python string offsets into `passage()` (what the model reads),
    converted to Qt's UTF-16 positions here, so `highlight_answer(start, end)` marks
    exactly `passage()[start:end]`, emoji included. The highlight is an
    `ExtraSelection`: it never changes the text or its undo history, and any edit of
    the text clears it (its offsets would be stale). Highlighting scrolls the answer
    to the middle of the view without moving the user's caret.

    With `set_probability_shading` (a `PassageShading`, prepared in a worker), each
    token's background is tinted by its start (blue) and end (red) probability;
    hovering a token shows both numbers. The tints are painted over the visible
    tokens only, at every repaint, so a passage of any length costs what a screenful
    does, and moving the answer highlight repaints nothing else.

    A text that would make the passage larger than `MAX_PASSAGE_BYTES` (pasted, dropped
    or set) is not taken: `refused` says why, and the passage stays as it was.

    Signals:
        refused(str): a text was not taken; one line on why.

    Args:
        parent: the parent widget.
    """

    refused = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("passageView")
        self.setTabChangesFocus(True)
        self._positions = QtTextPositions("")
        self._answer_selection = None
        self._answer_qt_span = None
        self._shading = None
        self.textChanged.connect(self._forget_highlights)

    def passage(self):
        """The passage as the model reads it (Qt's plain text: line breaks as "\\n")."""
        return self.toPlainText()

    def set_passage(self, text):
        """Replaces the passage (clears highlights); False (and `refused`) where `text`
        is too large to take."""
        problem = passage_size_problem("The passage would be", utf8_size(text))
        if problem:
            self.refused.emit(problem)
            return False
        self.setPlainText(text)
        return True

    def insertFromMimeData(self, source):
        # Paste and drop: the size is checked before Qt lays out a single line of it.
        if source.hasText():
            kept = utf8_size(self.passage()) - utf8_size(self.textCursor().selectedText())
            problem = passage_size_problem(
                "Not pasted: the passage would be", kept + utf8_size(source.text())
            )
            if problem:
                self.refused.emit(problem)
                return
        super().insertFromMimeData(source)

    # --- Answer highlight ------------------------------------------------------------

    def highlight_answer(self, start, end, scroll=True):
        """Highlights `passage()[start:end]`; with `scroll`, brings it into view."""
        positions = self._current_positions()
        qt_start, qt_end = positions.to_qt(start), positions.to_qt(end)
        cursor = QTextCursor(self.document())
        cursor.setPosition(qt_start)
        cursor.setPosition(qt_end, QTextCursor.MoveMode.KeepAnchor)
        selection = QTextEdit.ExtraSelection()
        selection.cursor = cursor
        selection.format = QTextCharFormat()
        selection.format.setBackground(ANSWER_BACKGROUND)
        selection.format.setForeground(ANSWER_FOREGROUND)
        selection.format.setFontUnderline(True)
        selection.format.setUnderlineColor(QColor(style.ANSWER_UNDERLINE))
        self._answer_selection = selection
        self._answer_qt_span = (qt_start, qt_end)
        self.setExtraSelections([selection])
        if scroll:
            self._center_on(qt_start)

    def _center_on(self, qt_position):
        # Centring moves the caret; the user's caret goes back, the scroll bars stay.
        caret = self.textCursor()
        target = QTextCursor(self.document())
        target.setPosition(qt_position)
        self.setTextCursor(target)
        self.centerCursor()
        vertical, horizontal = self.verticalScrollBar().value(), self.horizontalScrollBar().value()
        self.setTextCursor(caret)
        self.verticalScrollBar().setValue(vertical)
        self.horizontalScrollBar().setValue(horizontal)

    def clear_answer(self):
        self._answer_selection = None
        self._answer_qt_span = None
        self.setExtraSelections([])

    def answer_selection(self):
        """The answer's `QTextEdit.ExtraSelection`, or None when nothing is highlighted."""
        return self._answer_selection

    def highlighted_span(self):
        """`(start, end)` Python offsets of the highlighted answer, or None."""
        if self._answer_selection is None:
            return None
        cursor = self._answer_selection.cursor
        positions = self._current_positions()
        return positions.from_qt(cursor.selectionStart()), positions.from_qt(cursor.selectionEnd())

    def is_in_view(self, start, end):
        """Whether some of `passage()[start:end]` is inside the visible area."""
        positions = self._current_positions()
        viewport = self.viewport().rect()
        return any(
            rectangle.intersects(viewport)
            for rectangle in self._span_rectangles(positions.to_qt(start), positions.to_qt(end))
        )

    # --- Probability shading ---------------------------------------------------------

    def set_probability_shading(self, shading):
        """Tints each token of `shading` (a `PassageShading` of this passage)."""
        self._shading = shading if shading is not None and len(shading) else None
        self.viewport().update()

    def clear_shading(self):
        self.set_probability_shading(None)

    def has_shading(self):
        return self._shading is not None

    def token_probabilities_at(self, position):
        """`(start_probability, end_probability)` of the shaded token at Qt `position`."""
        return None if self._shading is None else self._shading.probabilities_at(position)

    # --- Internals -------------------------------------------------------------------

    def _current_positions(self):
        text = self.passage()
        if self._positions.text != text:
            self._positions = QtTextPositions(text)
        return self._positions

    def _forget_highlights(self):
        self._shading = None
        if self._answer_selection is not None:
            self.clear_answer()

    def _span_rectangles(self, qt_start, qt_end):
        """Viewport rectangles covering Qt positions `[qt_start, qt_end)`: one per line
        for a span on one or two lines (a token wrapped over more shows its ends)."""
        cursor = QTextCursor(self.document())
        cursor.setPosition(qt_start)
        first = self.cursorRect(cursor)
        cursor.setPosition(qt_end)
        last = self.cursorRect(cursor)
        if first.top() == last.top():
            return [QRect(first.left(), first.top(), last.left() - first.left(), first.height())]
        right = self.viewport().width()
        return [
            QRect(first.left(), first.top(), right - first.left(), first.height()),
            QRect(0, last.top(), last.left(), last.height()),
        ]

    def paintEvent(self, event):
        super().paintEvent(event)
        if self._shading is None:
            return
        viewport = self.viewport()
        first = self.cursorForPosition(QPoint(0, 0)).position()
        last = self.cursorForPosition(QPoint(viewport.width(), viewport.height())).position()
        answer = self._answer_qt_span
        painter = QPainter(viewport)
        # Multiplied over the painted text: white paper takes the tint, black text stays.
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Multiply)
        shading = self._shading
        for index in shading.tinted_between(first, last):
            start, end = int(shading.qt_starts[index]), int(shading.qt_ends[index])
            if answer is not None and start < answer[1] and answer[0] < end:
                continue  # the answer's highlight stays as it is
            color = shading.color(index)
            for rectangle in self._span_rectangles(start, end):
                painter.fillRect(rectangle, color)
        painter.end()

    def viewportEvent(self, event):
        if event.type() == QEvent.Type.ToolTip and self._shading is not None:
            position = self.cursorForPosition(event.pos()).position()
            probabilities = self.token_probabilities_at(position)
            if probabilities is None and position > 0:
                # The cursor lands between characters: try the one left of it.
                probabilities = self.token_probabilities_at(position - 1)
            if probabilities is not None:
                QToolTip.showText(
                    event.globalPos(),
                    f"start {probability_text(probabilities[0])} · end "
                    f"{probability_text(probabilities[1])}",
                    self.viewport(),
                )
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)
