"""A widget that paints its own content: a sentence while it has none, tooltips and
clicks by the point under the pointer."""

from PySide6.QtCore import QPointF
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QWidget

from kbert_gui.widgets import style
from kbert_gui.widgets.point_tooltip import show_point_tooltip


class PaintedView(QWidget):
    """The frame of a hand-painted view that a scroll area holds.

    Its size hint is also its minimum, so a scroll area scrolls it rather than
    squeezing it; `_content_changed()` resizes and repaints it after new content. A
    paint fills the palette's base colour, then draws `_paint_content(painter)` or,
    while `_placeholder()` returns a sentence (nothing to show), that sentence muted
    in the middle. Hovering shows `_tooltip_at(point)` (none where it is None); a
    left click where `_click_at(point)` returns True is accepted there.

    Subclasses give `sizeHint`, `_placeholder` and `_paint_content`, and
    `_tooltip_at` / `_click_at` where they answer the pointer.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMouseTracking(True)

    def minimumSizeHint(self):
        return self.sizeHint()

    def _content_changed(self):
        self.updateGeometry()
        self.adjustSize()
        self.update()

    def _placeholder(self):
        """The sentence shown while there is nothing to paint, else None."""
        return None

    def _paint_content(self, painter):
        """Paints the content with `painter` (on the base colour)."""

    def _tooltip_at(self, point):
        """The tooltip at `point` (a `QPointF` in the widget), or None."""
        return None

    def _click_at(self, point):
        """Answers a left click at `point`; True where it did."""
        return False

    def paintEvent(self, event):
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.palette().base())
        placeholder = self._placeholder()
        if placeholder is None:
            self._paint_content(painter)
            return
        painter.setPen(QColor(style.MUTED_TEXT))
        painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, placeholder)

    def mousePressEvent(self, event):
        left = event.button() == Qt.MouseButton.LeftButton
        if left and self._click_at(QPointF(event.position())):
            event.accept()
            return
        super().mousePressEvent(event)

    def event(self, event):
        return show_point_tooltip(self, event, self._tooltip_at) or super().event(event)
