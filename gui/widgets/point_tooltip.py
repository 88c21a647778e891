"""A painted widget's tooltip: the text of whatever lies under the pointer."""

from PySide6.QtCore import QEvent
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QToolTip


def show_point_tooltip(widget, event, text_at):
    """Answers `widget`'s tooltip event with `text_at(point)` (a `QPointF` in the
    widget), hiding the tooltip where that is None.

    For `QWidget.event`: `return show_point_tooltip(self, event, self._tooltip_at) or
    super().event(event)`. True where `event` was a tooltip event (handled), else False.
    """
    if event.type() != QEvent.Type.ToolTip:
        return False
    text = text_at(QPointF(event.pos()))
    if text is None:
        QToolTip.hideText()
    else:
        QToolTip.showText(event.globalPos(), text, widget)
    return True
