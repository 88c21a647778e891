"""Every head of one layer at a glance: a thumbnail heat map per head."""

from PySide6.QtCore import QRectF
from PySide6.QtCore import QSize
from PySide6.QtCore import Qt
from PySide6.QtCore import Signal
from PySide6.QtGui import QColor

from kbert_gui.masked_words.attention_images import weights_image
from kbert_gui.widgets import style
from kbert_gui.widgets.painted_view import PaintedView

THUMBNAIL = 150
GAP = 14
MARGIN = 8
CAPTION = 20


class AttentionHeadGrid(PaintedView):
    """The heads of one layer as thumbnails, in rows of `columns`; click one to enlarge.

    `set_layer(attention, layer)` takes a `kbert.inference.AttentionMap` and a layer
    index (None: the average of the layers) and draws each head's (L, L) map as in
    `AttentionHeatMap`, scaled to `THUMBNAIL` pixels. Hovering a thumbnail shows the
    head, the query and key tokens under the pointer and their weight; a click emits
    `head_chosen(head)`.

    Signals:
        head_chosen(int): the head the user clicked.

    Args:
        columns: thumbnails per row.
        parent: the parent widget.
    """

    head_chosen = Signal(int)

    def __init__(self, columns=4, parent=None):
        super().__init__(parent)
        self.setObjectName("attentionHeadGrid")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._columns = columns
        self._tokens = ()
        self._maps = []
        self._images = []
        self._layer = None

    @property
    def maps(self):
        """The shown (L, L) map of each head."""
        return list(self._maps)

    def set_layer(self, attention, layer):
        self._tokens = attention.tokens
        self._layer = layer
        self._maps = [attention.select(layer, head) for head in range(attention.num_heads)]
        self._images = [weights_image(weights) for weights in self._maps]
        self._content_changed()

    def clear(self):
        self._tokens, self._maps, self._images = (), [], []
        self.updateGeometry()
        self.update()

    def sizeHint(self):
        if not self._maps:
            return QSize(320, 200)
        columns = min(self._columns, len(self._maps))
        rows = -(-len(self._maps) // columns)
        return QSize(
            2 * MARGIN + columns * THUMBNAIL + (columns - 1) * GAP,
            2 * MARGIN + rows * (THUMBNAIL + CAPTION) + (rows - 1) * GAP,
        )

    def thumbnail_rect(self, head):
        """Where head `head`'s thumbnail is drawn, in widget coordinates."""
        row, column = divmod(head, self._columns)
        x = MARGIN + column * (THUMBNAIL + GAP)
        y = MARGIN + row * (THUMBNAIL + CAPTION + GAP) + CAPTION
        return QRectF(x, y, THUMBNAIL, THUMBNAIL)

    def _cell_at(self, point):
        """`(head, query, key)` under `point`, or None."""
        count = len(self._tokens)
        for head in range(len(self._maps)):
            rect = self.thumbnail_rect(head)
            if rect.contains(point):
                query = min(int((point.y() - rect.top()) / THUMBNAIL * count), count - 1)
                key = min(int((point.x() - rect.left()) / THUMBNAIL * count), count - 1)
                return head, query, key
        return None

    def _placeholder(self):
        return None if self._maps else "The heads appear here."

    def _paint_content(self, painter):
        layer = "average of layers" if self._layer is None else f"layer {self._layer + 1}"
        for head, image in enumerate(self._images):
            rect = self.thumbnail_rect(head)
            painter.setPen(self.palette().text().color())
            painter.drawText(
                QRectF(rect.left(), rect.top() - CAPTION, THUMBNAIL, CAPTION),
                int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                f"head {head + 1} · {layer}",
            )
            painter.drawImage(rect, image)
            painter.setPen(QColor(style.MAP_BORDER))
            painter.drawRect(rect)

    def _click_at(self, point):
        cell = self._cell_at(point)
        if cell is not None:
            self.head_chosen.emit(cell[0])
        return cell is not None

    def _tooltip_at(self, point):
        cell = self._cell_at(point)
        if cell is None:
            return None
        head, query, key = cell
        return (
            f"head {head + 1}: {self._tokens[query]} → {self._tokens[key]}: "
            f"{float(self._maps[head][query][key]):.3f}\nClick to enlarge."
        )
