"""A heat map of attention weights with the tokens as axis labels."""

import numpy as np
from PySide6.QtCore import QPointF
from PySide6.QtCore import QRectF
from PySide6.QtCore import QSize
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from kbert_gui.masked_words.attention_images import weights_image
from kbert_gui.widgets import style
from kbert_gui.widgets.painted_view import PaintedView

# Cell edge in pixels: a readable label for short texts, still on screen for long ones.
MAX_CELL = 30
MIN_CELL = 14
MARGIN = 8


class AttentionHeatMap(PaintedView):
    """Row i, column j: how much token i (the query) attends to token j (the key).

    `set_map(tokens, weights)` takes the token strings and an (L, L) nested
    sequence or array of weights in [0, 1]. The colour runs from white (0) to dark
    blue (1) on a square-root scale, so that the many small weights of a row stay
    distinguishable; hovering a cell shows its value.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("attentionHeatMap")
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, False)
        self._tokens = ()
        self._weights = None
        self._largest = 0.0
        self._image = None

    @property
    def tokens(self):
        return self._tokens

    @property
    def weights(self):
        """The shown (L, L) weights, or None."""
        return self._weights

    def set_map(self, tokens, weights):
        self._tokens = tuple(tokens)
        self._weights = weights
        self._largest = float(np.max(weights)) if len(weights) else 0.0
        self._image = weights_image(weights)
        self._content_changed()

    def clear(self):
        self._tokens = ()
        self._weights = None
        self._largest = 0.0
        self._image = None
        self.updateGeometry()
        self.update()

    # --- Geometry ---------------------------------------------------------------------

    def _label_extent(self):
        metrics = self.fontMetrics()
        return max((metrics.horizontalAdvance(token) for token in self._tokens), default=0) + 10

    def _cell(self):
        return MAX_CELL if len(self._tokens) <= 24 else MIN_CELL + 4

    def _origin(self):
        extent = self._label_extent()
        return QPointF(MARGIN + extent, MARGIN + extent)

    def sizeHint(self):
        count = len(self._tokens)
        if not count:
            return QSize(320, 200)
        side = 2 * MARGIN + self._label_extent() + count * self._cell()
        legend_width = self.fontMetrics().horizontalAdvance(self._legend())
        legend = 2 * MARGIN + self._label_extent() + legend_width
        return QSize(max(side, legend), side + 24)

    def _legend(self):
        return (
            f"rows attend to columns · white 0, dark blue 1 · largest {self._largest:.2f}"
        )

    def _cell_at(self, point):
        if self._weights is None:
            return None
        origin, cell = self._origin(), self._cell()
        column = int((point.x() - origin.x()) // cell)
        row = int((point.y() - origin.y()) // cell)
        count = len(self._tokens)
        if point.x() < origin.x() or point.y() < origin.y() or row >= count or column >= count:
            return None
        return row, column

    # --- Painting ---------------------------------------------------------------------

    def _placeholder(self):
        if self._weights is None or not self._tokens:
            return "The attention map appears here."
        return None

    def _paint_content(self, painter):
        origin, cell = self._origin(), self._cell()
        count = len(self._tokens)
        # One pixel per cell, scaled up without smoothing: sharp cells, one draw call.
        painter.drawImage(QRectF(origin.x(), origin.y(), count * cell, count * cell), self._image)
        painter.setPen(QColor(style.MAP_BORDER))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(QRectF(origin.x(), origin.y(), count * cell, count * cell))

        painter.setPen(self.palette().text().color())
        extent = self._label_extent()
        for index, token in enumerate(self._tokens):
            # Row labels (queries) on the left, right-aligned against the map.
            painter.drawText(
                QRectF(MARGIN, origin.y() + index * cell, extent - 6, cell),
                int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                token,
            )
            # Column labels (keys) on top, rotated to read bottom-up.
            painter.save()
            painter.translate(origin.x() + index * cell, origin.y() - 6)
            painter.rotate(-90)
            painter.drawText(
                QRectF(0, 0, extent - 6, cell),
                int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                token,
            )
            painter.restore()
        painter.setPen(QColor(style.MUTED_TEXT))
        painter.drawText(
            QRectF(origin.x(), origin.y() + count * cell + 4, self.width() - origin.x(), 20),
            int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
            self._legend(),
        )

    def _tooltip_at(self, point):
        cell = self._cell_at(point)
        if cell is None:
            return None
        row, column = cell
        return (
            f"{self._tokens[row]} → {self._tokens[column]}: "
            f"{float(self._weights[row][column]):.3f}"
        )
