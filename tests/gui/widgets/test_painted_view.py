"""`PaintedView`, the frame of the attention views: a muted sentence while there is
nothing to paint, the content otherwise, its size hint as its minimum, and left clicks
handed to `_click_at`."""

from PySide6.QtCore import QPoint
from PySide6.QtCore import QSize
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from kbert_gui.masked_words.attention_head_grid import AttentionHeadGrid
from kbert_gui.widgets import style
from kbert_gui.widgets.painted_view import PaintedView

CONTENT = QColor("#123456")


class _Square(PaintedView):
    """Paints CONTENT all over once it has content; records the points clicked."""

    def __init__(self):
        super().__init__()
        self.has_content = False
        self.clicks = []

    def sizeHint(self):
        return QSize(120, 80)

    def _placeholder(self):
        return None if self.has_content else "Nothing yet."

    def _paint_content(self, painter):
        painter.fillRect(self.rect(), CONTENT)

    def _click_at(self, point):
        self.clicks.append((point.x(), point.y()))
        return True


def _colors(widget):
    image = widget.grab().toImage()
    return {
        image.pixelColor(x, y).name()
        for x in range(0, image.width(), 3)
        for y in range(0, image.height(), 3)
    }


def test_a_sentence_until_there_is_content(qtbot):
    view = _Square()
    qtbot.addWidget(view)
    view.resize(view.sizeHint())
    assert view.minimumSizeHint() == view.sizeHint()
    empty = _colors(view)
    assert CONTENT.name() not in empty and len(empty) > 1  # the base colour and the text
    assert view.palette().base().color().name() in empty
    view.has_content = True
    assert _colors(view) == {CONTENT.name()}
    assert QColor(style.MUTED_TEXT).name() != CONTENT.name()


def test_only_left_clicks_reach_click_at(qtbot):
    view = _Square()
    qtbot.addWidget(view)
    view.resize(view.sizeHint())
    qtbot.mouseClick(view, Qt.MouseButton.RightButton, pos=QPoint(5, 6))
    assert view.clicks == []
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=QPoint(5, 6))
    assert view.clicks == [(5.0, 6.0)]


def test_a_left_click_on_a_thumbnail_chooses_its_head(qtbot):
    class Attention:
        tokens = ("a", "b")
        num_heads = 3

        @staticmethod
        def select(layer, head):
            return [[1.0, 0.0], [0.5, 0.5]]

    grid = AttentionHeadGrid(columns=2)
    qtbot.addWidget(grid)
    grid.set_layer(Attention(), 0)
    centre = grid.thumbnail_rect(2).center().toPoint()
    with qtbot.assertNotEmitted(grid.head_chosen):
        qtbot.mouseClick(grid, Qt.MouseButton.RightButton, pos=centre)
        qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=QPoint(1, 1))
    with qtbot.waitSignal(grid.head_chosen) as chosen:
        qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=centre)
    assert chosen.args == [2]
