"""Every layer and head at once: a grid of thumbnails, layers down and heads across."""

from PySide6.QtCore import QRectF
from PySide6.QtCore import QSize
from PySide6.QtCore import Qt
from PySide6.QtCore import Signal
from PySide6.QtGui import QColor

from kbert_gui.masked_words.attention_images import weights_image
from kbert_gui.widgets import style
from kbert_gui.widgets.painted_view import PaintedView

# Thumbnail edges: the heads of a row share about ROW_WIDTH pixels, so BERT-base's 12
# fit across a window and a small model's few are not postage stamps.
MIN_THUMBNAIL = 72
MAX_THUMBNAIL = 160
ROW_WIDTH = 960
GAP = 6
MARGIN = 8
# Room for "layer 12" on the left and "head 12" on top.
ROW_LABEL = 64
COLUMN_LABEL = 20
# Below the grid: the rows' tokens, the columns' tokens, the colour scale.
LEGEND_LINE = 18
LEGEND_LINES = 3
EMPTY_TEXT = "Every layer and head appears here."


class AttentionModelView(PaintedView):
    """The attention of every layer (rows) and head (columns) as thumbnails, as
    bertviz's "model view" shows it; click one to open it on its own.

    `set_attention(attention, segments)` takes a `kbert.inference.AttentionMap` and
    either None (each thumbnail is a head's whole (L, L) map) or `(queries, keys)`,
    two segment ids of a pair (each thumbnail is then `attention.block(queries, keys,
    layer, head)`: how the tokens of one segment attend to those of the other). The
    thumbnails are drawn as in `AttentionHeatMap`, scaled to squares of `thumbnail`
    pixels (from `MIN_THUMBNAIL` for many heads to `MAX_THUMBNAIL` for few).
    Hovering one shows its layer, head, the query and key tokens under the pointer
    and their weight; a click emits `head_chosen(layer, head)`. A legend under the
    grid names the rows' and the columns' tokens, cut to the grid's width (the white
    backdrop is the grid's own) and whole in its tooltip. `show_hint(text)` shows a
    sentence in place of the grid.

    Signals:
        head_chosen(int, int): the layer and head the user clicked.

    Args:
        parent: the parent widget.
    """

    head_chosen = Signal(int, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("attentionModelView")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._query_tokens = ()
        self._key_tokens = ()
        self._maps = []  # [layer][head] -> (Q, K) weights
        self._images = []  # [layer][head] -> QImage
        self._hint = EMPTY_TEXT
        self.thumbnail = MIN_THUMBNAIL

    @property
    def maps(self):
        """The shown weights: `maps[layer][head]` is a (queries, keys) array."""
        return [list(row) for row in self._maps]

    @property
    def query_tokens(self):
        """The tokens of the thumbnails' rows."""
        return self._query_tokens

    @property
    def key_tokens(self):
        """The tokens of the thumbnails' columns."""
        return self._key_tokens

    def set_attention(self, attention, segments=None):
        if segments is None:
            self._query_tokens = self._key_tokens = tuple(attention.tokens)
            self._maps = [
                [attention.select(layer, head) for head in range(attention.num_heads)]
                for layer in range(attention.num_layers)
            ]
        else:
            queries, keys = segments
            self._query_tokens = attention.segment_tokens(queries)
            self._key_tokens = attention.segment_tokens(keys)
            self._maps = [
                [attention.block(queries, keys, layer, head) for head in range(attention.num_heads)]
                for layer in range(attention.num_layers)
            ]
        self._images = [[weights_image(weights) for weights in row] for row in self._maps]
        self.thumbnail = max(
            MIN_THUMBNAIL, min(MAX_THUMBNAIL, ROW_WIDTH // attention.num_heads - GAP)
        )
        self._content_changed()

    def show_hint(self, text):
        """No thumbnails: `text` in their place."""
        self._query_tokens, self._key_tokens, self._maps, self._images = (), (), [], []
        self._hint = text
        self._content_changed()

    def clear(self):
        self.show_hint(EMPTY_TEXT)

    # --- Geometry ---------------------------------------------------------------------

    def sizeHint(self):
        if not self._maps:
            return QSize(max(320, self.fontMetrics().horizontalAdvance(self._hint) + 40), 200)
        layers, heads = len(self._maps), len(self._maps[0])
        # As wide as the grid: a long legend is cut to it, not a wider backdrop.
        return QSize(
            2 * MARGIN + ROW_LABEL + heads * self.thumbnail + (heads - 1) * GAP,
            2 * MARGIN + COLUMN_LABEL + layers * self.thumbnail + (layers - 1) * GAP
            + LEGEND_LINES * LEGEND_LINE + GAP,
        )

    def thumbnail_rect(self, layer, head):
        """Where the thumbnail of `layer` and `head` is drawn, in widget coordinates."""
        side = self.thumbnail
        x = MARGIN + ROW_LABEL + head * (side + GAP)
        y = MARGIN + COLUMN_LABEL + layer * (side + GAP)
        return QRectF(x, y, side, side)

    def legend_line_at(self, point):
        """The whole legend line under `point`, or None."""
        if not self._maps:
            return None
        top = self.thumbnail_rect(len(self._maps) - 1, 0).bottom() + GAP
        index = int((point.y() - top) // LEGEND_LINE)
        lines = self.legend()
        return lines[index] if point.y() >= top and index < len(lines) else None

    def cell_at(self, point):
        """`(layer, head, query, key)` under `point`, or None (a gap, a label)."""
        if not self._maps:
            return None
        side = self.thumbnail
        pitch = side + GAP
        head = int((point.x() - MARGIN - ROW_LABEL) // pitch)
        layer = int((point.y() - MARGIN - COLUMN_LABEL) // pitch)
        if not (0 <= layer < len(self._maps) and 0 <= head < len(self._maps[0])):
            return None
        rect = self.thumbnail_rect(layer, head)
        if not rect.contains(point):
            return None
        rows, columns = len(self._query_tokens), len(self._key_tokens)
        query = min(int((point.y() - rect.top()) / side * rows), rows - 1)
        key = min(int((point.x() - rect.left()) / side * columns), columns - 1)
        return layer, head, query, key

    # --- Painting ---------------------------------------------------------------------

    def _placeholder(self):
        return None if self._maps else self._hint

    def _paint_content(self, painter):
        painter.setPen(self.palette().text().color())
        for head in range(len(self._maps[0])):
            rect = self.thumbnail_rect(0, head)
            painter.drawText(
                QRectF(rect.left(), MARGIN, rect.width(), COLUMN_LABEL),
                int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter),
                f"head {head + 1}",
            )
        for layer, images in enumerate(self._images):
            rect = self.thumbnail_rect(layer, 0)
            painter.setPen(self.palette().text().color())
            painter.drawText(
                QRectF(MARGIN, rect.top(), ROW_LABEL - 8, rect.height()),
                int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                f"layer {layer + 1}",
            )
            painter.setPen(QColor(style.MAP_BORDER))
            for head, image in enumerate(images):
                rect = self.thumbnail_rect(layer, head)
                painter.drawImage(rect, image)
                painter.drawRect(rect)
        painter.setPen(QColor(style.MUTED_TEXT))
        top = self.thumbnail_rect(len(self._maps) - 1, 0).bottom() + GAP
        width = self.width() - 2 * MARGIN
        for index, line in enumerate(self.legend()):
            painter.drawText(
                QRectF(MARGIN, top + index * LEGEND_LINE, width, LEGEND_LINE),
                int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                self.fontMetrics().elidedText(line, Qt.TextElideMode.ElideRight, int(width)),
            )

    def legend(self):
        """The lines under the grid: the rows' tokens, the columns' tokens, the scale."""
        return (
            f"rows (attending): {' '.join(self._query_tokens)}",
            f"columns (attended to): {' '.join(self._key_tokens)}",
            "white 0, dark blue 1 · hover for weights · click a thumbnail to open it",
        )

    def _click_at(self, point):
        cell = self.cell_at(point)
        if cell is not None:
            self.head_chosen.emit(cell[0], cell[1])
        return cell is not None

    def _tooltip_at(self, point):
        cell = self.cell_at(point)
        return self.cell_text(*cell) if cell is not None else self.legend_line_at(point)

    def cell_text(self, layer, head, query, key):
        """The tooltip of one cell of one thumbnail."""
        weight = float(self._maps[layer][head][query][key])
        return (
            f"layer {layer + 1} · head {head + 1}: {self._query_tokens[query]} → "
            f"{self._key_tokens[key]}: {weight:.3f}\nClick to open this head."
        )
