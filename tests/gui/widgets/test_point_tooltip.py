"""`show_point_tooltip` answers a painted widget's tooltip event with the text of the
point under the pointer (the attention views' cells and tokens), and hides it elsewhere."""

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtCore import QPoint
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QWidget

from kbert_gui.masked_words.attention_heat_map import AttentionHeatMap
from kbert_gui.widgets import point_tooltip
from kbert_gui.widgets.point_tooltip import show_point_tooltip


class _ToolTip:
    """Records what would be shown (the offscreen platform warns on a real tooltip)."""

    shown = []

    @classmethod
    def showText(cls, position, text, widget):
        cls.shown.append((text, widget))

    @classmethod
    def hideText(cls):
        cls.shown.append((None, None))


@pytest.fixture
def tooltip(monkeypatch):
    _ToolTip.shown = []
    monkeypatch.setattr(point_tooltip, "QToolTip", _ToolTip)
    return _ToolTip


def _help_event(point):
    return QHelpEvent(QEvent.Type.ToolTip, point, point)


def test_the_text_at_the_point_is_shown_and_none_hides_it(qtbot, tooltip):
    widget = QWidget()
    qtbot.addWidget(widget)
    seen = []

    def text_at(point):
        seen.append((point.x(), point.y()))
        return "here" if point.x() < 50 else None

    assert show_point_tooltip(widget, _help_event(QPoint(10, 20)), text_at)
    assert show_point_tooltip(widget, _help_event(QPoint(80, 20)), text_at)
    assert seen == [(10.0, 20.0), (80.0, 20.0)]
    assert tooltip.shown == [("here", widget), (None, None)]
    assert not show_point_tooltip(widget, QEvent(QEvent.Type.Enter), text_at)
    assert len(seen) == 2


def test_the_heat_map_names_the_cell_under_the_pointer(qtbot, tooltip):
    view = AttentionHeatMap()
    qtbot.addWidget(view)
    view.set_map(["a", "b"], [[0.25, 0.75], [0.5, 0.5]])
    origin, cell = view._origin(), view._cell()
    point = QPoint(int(origin.x() + 1.5 * cell), int(origin.y() + 0.5 * cell))
    assert view.event(_help_event(point))
    assert tooltip.shown == [("a → b: 0.750", view)]
