"""An editable passage that highlights answer spans and shades token probabilities."""

import bisect
import math

from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor
from PySide6.QtGui import QTextCharFormat
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit
from PySide6.QtWidgets import QTextEdit
from PySide6.QtWidgets import QToolTip

from kbert_gui.qt_text_positions import QtTextPositions

ANSWER_BACKGROUND = QColor("#ffd54f")
ANSWER_FOREGROUND = QColor("#1a1a1a")
# Shading: start probability tints blue, end probability tints red (both: purple).
START_TINT = QColor("#1e88e5")
END_TINT = QColor("#e53935")
PAPER = QColor("#ffffff")


class PassageView(QPlainTextEdit):
    """The QA passage: the user pastes or edits it; answers are highlighted in it.

    All offsets are Python string offsets into `passage()` (what the model reads),
    converted to Qt's UTF-16 positions here, so `highlight_answer(start, end)` marks
    exactly `passage()[start:end]`, emoji included. Highlights are `ExtraSelection`s:
    they never change the text or its undo history, and any edit of the text clears
    them (their offsets would be stale).

    With `set_probability_shading`, each token's background is tinted by its start
    (blue) and end (red) probability; hovering a token shows both numbers.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("passageView")
        self.setTabChangesFocus(True)
        self._positions = QtTextPositions("")
        self._answer_selection = None
        self._shading = []
        # Token spans in Qt positions and their probabilities, for hover tooltips.
        self._token_starts = []
        self._token_ends = []
        self._token_probabilities = []
        self.textChanged.connect(self._forget_highlights)

    def passage(self):
        """The passage as the model reads it (Qt's plain text: line breaks as "\\n")."""
        return self.toPlainText()

    def set_passage(self, text):
        """Replaces the passage (clears highlights)."""
        self.setPlainText(text)

    # --- Answer highlight ------------------------------------------------------------

    def highlight_answer(self, start, end):
        """Highlights `passage()[start:end]`; scrolls to it unless the user is typing here."""
        positions = self._current_positions()
        cursor = QTextCursor(self.document())
        cursor.setPosition(positions.to_qt(start))
        cursor.setPosition(positions.to_qt(end), QTextCursor.MoveMode.KeepAnchor)
        selection = QTextEdit.ExtraSelection()
        selection.cursor = cursor
        selection.format = QTextCharFormat()
        selection.format.setBackground(ANSWER_BACKGROUND)
        selection.format.setForeground(ANSWER_FOREGROUND)
        selection.format.setFontUnderline(True)
        selection.format.setUnderlineColor(QColor("#b26a00"))
        self._answer_selection = selection
        self._apply_selections()
        if not self.hasFocus():
            # Scrolls by moving the caret, unless the user is typing here.
            caret = QTextCursor(self.document())
            caret.setPosition(positions.to_qt(start))
            self.setTextCursor(caret)
            self.ensureCursorVisible()

    def clear_answer(self):
        self._answer_selection = None
        self._apply_selections()

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

    # --- Probability shading ---------------------------------------------------------

    def set_probability_shading(self, spans, start_probabilities, end_probabilities):
        """Tints each token `(start, end)` of `passage()` by its start and end probability."""
        positions = self._current_positions()
        self._shading = []
        self._token_starts, self._token_ends, self._token_probabilities = [], [], []
        for (start, end), start_probability, end_probability in zip(
            spans, start_probabilities, end_probabilities
        ):
            qt_start, qt_end = positions.to_qt(start), positions.to_qt(end)
            self._token_starts.append(qt_start)
            self._token_ends.append(qt_end)
            self._token_probabilities.append((start_probability, end_probability))
            color = _tint(start_probability, end_probability)
            if color is None:
                continue
            cursor = QTextCursor(self.document())
            cursor.setPosition(qt_start)
            cursor.setPosition(qt_end, QTextCursor.MoveMode.KeepAnchor)
            selection = QTextEdit.ExtraSelection()
            selection.cursor = cursor
            selection.format = QTextCharFormat()
            selection.format.setBackground(color)
            self._shading.append(selection)
        self._apply_selections()

    def clear_shading(self):
        self._shading = []
        self._token_starts, self._token_ends, self._token_probabilities = [], [], []
        self._apply_selections()

    def has_shading(self):
        return bool(self._token_starts)

    def token_probabilities_at(self, position):
        """`(start_probability, end_probability)` of the shaded token at Qt `position`."""
        index = bisect.bisect_right(self._token_starts, position) - 1
        if index < 0 or position >= self._token_ends[index]:
            return None
        return self._token_probabilities[index]

    # --- Internals -------------------------------------------------------------------

    def _current_positions(self):
        text = self.passage()
        if self._positions.text != text:
            self._positions = QtTextPositions(text)
        return self._positions

    def _apply_selections(self):
        # The answer goes last: it paints over the shading.
        selections = list(self._shading)
        if self._answer_selection is not None:
            selections.append(self._answer_selection)
        self.setExtraSelections(selections)

    def _forget_highlights(self):
        if self._answer_selection is not None or self._token_starts:
            self._answer_selection = None
            self._shading = []
            self._token_starts, self._token_ends, self._token_probabilities = [], [], []
            self.setExtraSelections([])

    def viewportEvent(self, event):
        if event.type() == QEvent.Type.ToolTip and self._token_starts:
            position = self.cursorForPosition(event.pos()).position()
            probabilities = self.token_probabilities_at(position)
            if probabilities is None and position > 0:
                # The cursor lands between characters: try the one left of it.
                probabilities = self.token_probabilities_at(position - 1)
            if probabilities is not None:
                QToolTip.showText(
                    event.globalPos(),
                    f"start {probabilities[0]:.1%} · end {probabilities[1]:.1%}",
                    self.viewport(),
                )
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)


def _tint(start_probability, end_probability):
    """The background of a token, or None for one too unlikely to show."""
    # Square roots keep one-in-a-hundred tokens faintly visible next to certain ones.
    start_weight = math.sqrt(min(max(start_probability, 0.0), 1.0))
    end_weight = math.sqrt(min(max(end_probability, 0.0), 1.0))
    if max(start_weight, end_weight) < 0.05:
        return None
    channels = []
    for paper, start_tint, end_tint in zip(
        PAPER.getRgb()[:3], START_TINT.getRgb()[:3], END_TINT.getRgb()[:3]
    ):
        value = (
            paper
            - 0.6 * start_weight * (paper - start_tint)
            - 0.6 * end_weight * (paper - end_tint)
        )
        channels.append(int(min(max(value, 0), 255)))
    return QColor(*channels)
