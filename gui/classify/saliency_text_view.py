"""A read-only copy of the explained text, each word-piece shaded by its saliency score."""

import bisect

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QPlainTextEdit
from PySide6.QtWidgets import QToolTip

from kbert_gui.classify.saliency_format import shown_text
from kbert_gui.classify.saliency_format import token_colors
from kbert_gui.classify.saliency_format import token_tooltip
from kbert_gui.widgets.qt_text_positions import QtTextPositions
from kbert_gui.widgets.span_selection import span_selection


class SaliencyTextView(QPlainTextEdit):
    """Shows a `TokenSaliency`'s text (and a pair's second text on the next line) with a
    background per word-piece.

    Each piece's characters `text[start:end]` (converted to Qt's UTF-16 positions) get
    the colour `token_colors` gives its score: green for support, red for opposition,
    stronger for larger scores. Hovering a piece shows the piece and its score.
    A copy, not the input: the input can be edited while the scores stay readable,
    and the tab clears this view when they no longer match the input.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setReadOnly(True)
        self.setTabChangesFocus(True)
        self.saliency = None
        self._qt_starts = []
        self._qt_ends = []

    def set_saliency(self, saliency):
        """Shows `saliency`'s text with every piece shaded."""
        self.saliency = saliency
        text, offsets = shown_text(saliency)
        self.setPlainText(text)
        positions = QtTextPositions(text)
        self._qt_starts = [positions.to_qt(start) for start, _ in offsets]
        self._qt_ends = [positions.to_qt(end) for _, end in offsets]
        colors = token_colors(saliency.scores)
        selections = [
            span_selection(self.document(), start, end, color)
            for start, end, color in zip(self._qt_starts, self._qt_ends, colors)
        ]
        self.setExtraSelections(selections)

    def clear_saliency(self):
        self.saliency = None
        self._qt_starts, self._qt_ends = [], []
        self.setExtraSelections([])
        self.clear()

    def piece_at(self, position):
        """The index of the word-piece at Qt `position`, or None."""
        index = bisect.bisect_right(self._qt_starts, position) - 1
        if index < 0 or position >= self._qt_ends[index]:
            return None
        return index

    def tooltip_at(self, position):
        """The hover text at Qt `position` ("cat: +0.0123"), or None off the pieces."""
        index = self.piece_at(position)
        if index is None:
            return None
        return token_tooltip(self.saliency.tokens[index], self.saliency.scores[index])

    def qt_span(self, index):
        """`(start, end)` Qt positions of word-piece `index`."""
        return self._qt_starts[index], self._qt_ends[index]

    def viewportEvent(self, event):
        if event.type() == QEvent.Type.ToolTip and self.saliency is not None:
            text = self.tooltip_at(self.cursorForPosition(event.pos()).position())
            if text is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(event.globalPos(), text, self.viewport())
            return True
        return super().viewportEvent(event)
