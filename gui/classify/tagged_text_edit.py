"""A text input that highlights a tagger's entities in place, in their labels' colours."""

import bisect

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QPlainTextEdit
from PySide6.QtWidgets import QToolTip

from kbert_gui.classify.classify_format import span_tooltip
from kbert_gui.widgets import style
from kbert_gui.widgets.qt_text_positions import QtTextPositions
from kbert_gui.widgets.span_selection import span_selection


class TaggedTextEdit(QPlainTextEdit):
    """The "Classify & tag" input: the user types; entities are highlighted in it.

    `set_entities(text, entities, colors)` paints each `EntitySpan` over exactly
    `text[span.start:span.end]`, converted to Qt's UTF-16 positions (an emoji before
    a span takes two), as `ExtraSelection`s: the text and its undo history are never
    touched. It applies only while the editor still holds `text`; any edit clears
    the highlights (their offsets would be stale). Hovering an entity shows its
    label, score and characters.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setTabChangesFocus(True)
        self._entities = ()
        # Qt start positions of the highlighted spans, for hover lookups.
        self._qt_starts = []
        self._qt_ends = []
        self.textChanged.connect(self.clear_entities)

    def text(self):
        return self.toPlainText()

    def set_entities(self, text, entities, colors):
        """Highlights `entities` (of `text`) with `colors` ({label: "#rrggbb"}).

        Returns False, changing nothing, when the editor no longer holds `text`.
        """
        if text != self.toPlainText():
            return False
        positions = QtTextPositions(text)
        selections = []
        self._entities = tuple(entities)
        self._qt_starts, self._qt_ends = [], []
        for span in self._entities:
            start, end = positions.to_qt(span.start), positions.to_qt(span.end)
            self._qt_starts.append(start)
            self._qt_ends.append(end)
            color = colors.get(span.label, style.UNKNOWN_ENTITY)
            selection = span_selection(self.document(), start, end, color)
            selections.append(selection)
        self.setExtraSelections(selections)
        return True

    def clear_entities(self):
        if self._entities:
            self._entities = ()
            self._qt_starts, self._qt_ends = [], []
            self.setExtraSelections([])

    def highlighted_spans(self):
        """`(start, end, text)` of each highlight, in Python offsets read back from Qt."""
        text = self.toPlainText()
        positions = QtTextPositions(text)
        spans = []
        for selection in self.extraSelections():
            cursor = selection.cursor
            start = positions.from_qt(cursor.selectionStart())
            end = positions.from_qt(cursor.selectionEnd())
            spans.append((start, end, text[start:end]))
        return spans

    def entity_at(self, position):
        """The `EntitySpan` highlighted at Qt `position`, or None."""
        index = bisect.bisect_right(self._qt_starts, position) - 1
        if index < 0 or position >= self._qt_ends[index]:
            return None
        return self._entities[index]

    def viewportEvent(self, event):
        if event.type() == QEvent.Type.ToolTip and self._entities:
            span = self.entity_at(self.cursorForPosition(event.pos()).position())
            if span is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(event.globalPos(), span_tooltip(span), self.viewport())
            return True
        return super().viewportEvent(event)
