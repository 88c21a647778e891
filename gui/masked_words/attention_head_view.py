"""Attention as lines between tokens, as bertviz's head view draws it."""

import numpy as np
from PySide6.QtCore import QLineF
from PySide6.QtCore import QPointF
from PySide6.QtCore import QRectF
from PySide6.QtCore import QSize
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtGui import QPainter
from PySide6.QtGui import QPen

from kbert_gui.widgets import style
from kbert_gui.widgets.painted_view import PaintedView

ROW = 20
GAP = 220
MARGIN = 10
LINE_COLOR = QColor(style.ATTENTION)
FOCUS_COLOR = QColor(style.ATTENTION_FOCUS)
# Weights below this draw no line (a row of 128 tokens would otherwise draw 128).
FAINTEST = 0.01
# Opacity steps: the lines of one step are drawn in one call.
LEVELS = 12
LISTED = 5


class AttentionHeadView(PaintedView):
    """The tokens twice, queries on the left and keys on the right, and a line from
    each query to each key it attends to, as opaque as the weight (bertviz's "head
    view").

    `set_map(tokens, weights)` takes the token strings and an (L, L) array of
    weights in [0, 1]. Hovering a token on the left shows only its lines, on the
    right only the lines into it, and the tooltip lists the largest of their weights.
    The lines are grouped by opacity once per map, so a repaint is a dozen draw
    calls whatever the length of the text.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("attentionHeadView")
        self._tokens = ()
        self._weights = None
        self._levels = []  # (alpha, [QLineF]) for every line, by opacity
        self._focus = None  # ("query" or "key", index) under the pointer

    @property
    def weights(self):
        return self._weights

    @property
    def focus(self):
        """`("query" | "key", token index)` under the pointer, or None."""
        return self._focus

    def set_map(self, tokens, weights):
        self._tokens = tuple(tokens)
        self._weights = np.asarray(weights, dtype=np.float32)
        self._focus = None
        self._group_lines()
        self._content_changed()

    def clear(self):
        self._tokens, self._weights, self._levels, self._focus = (), None, [], None
        self.updateGeometry()
        self.update()

    # --- Geometry ---------------------------------------------------------------------

    def _column_width(self):
        metrics = self.fontMetrics()
        return max((metrics.horizontalAdvance(token) for token in self._tokens), default=40) + 12

    def _line_ends(self):
        """The x of the lines' left and right ends."""
        left = MARGIN + self._column_width()
        return left, left + GAP

    def sizeHint(self):
        if not self._tokens:
            return QSize(320, 200)
        width = 2 * MARGIN + 2 * self._column_width() + GAP
        return QSize(width, 2 * MARGIN + len(self._tokens) * ROW)

    def _y(self, index):
        return MARGIN + index * ROW + ROW / 2

    def _token_at(self, point):
        if not self._tokens:
            return None
        index = int((point.y() - MARGIN) // ROW)
        if not 0 <= index < len(self._tokens):
            return None
        left, right = self._line_ends()
        if point.x() < left:
            return "query", index
        if point.x() > right:
            return "key", index
        return None

    def _group_lines(self):
        left, right = self._line_ends()
        queries, keys = np.nonzero(self._weights >= FAINTEST)
        strengths = self._weights[queries, keys]
        steps = np.minimum((strengths * LEVELS).astype(int), LEVELS - 1)
        self._levels = []
        for step in range(LEVELS):
            chosen = np.flatnonzero(steps == step)
            if len(chosen):
                lines = [
                    QLineF(left, self._y(query), right, self._y(key))
                    for query, key in zip(queries[chosen].tolist(), keys[chosen].tolist())
                ]
                self._levels.append((int(40 + 215 * (step + 1) / LEVELS), lines))

    # --- Painting ---------------------------------------------------------------------

    def _placeholder(self):
        if self._weights is None or not self._tokens:
            return "The head view appears here."
        return None

    def _paint_content(self, painter):
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        left, right = self._line_ends()
        if self._focus is None:
            for alpha, lines in self._levels:
                color = QColor(LINE_COLOR)
                color.setAlpha(alpha)
                painter.setPen(QPen(color, 1.4))
                painter.drawLines(lines)
        else:
            for query, key, weight in self._focused_lines():
                color = QColor(FOCUS_COLOR)
                color.setAlpha(int(40 + 215 * min(weight, 1.0)))
                painter.setPen(QPen(color, 2.0))
                painter.drawLine(QPointF(left, self._y(query)), QPointF(right, self._y(key)))
        width = self._column_width()
        for index, token in enumerate(self._tokens):
            top = MARGIN + index * ROW
            for side, x, alignment in (
                ("query", MARGIN, Qt.AlignmentFlag.AlignRight),
                ("key", right + 6, Qt.AlignmentFlag.AlignLeft),
            ):
                focused = self._focus == (side, index)
                painter.setPen(FOCUS_COLOR if focused else self.palette().text().color())
                painter.drawText(
                    QRectF(x, top, width - 6, ROW),
                    int(alignment | Qt.AlignmentFlag.AlignVCenter),
                    token,
                )

    def _focused_lines(self):
        """`(query, key, weight)` of the lines of the focused token, weight FAINTEST up."""
        side, index = self._focus
        count = len(self._tokens)
        if side == "query":
            pairs = [(index, key, float(self._weights[index, key])) for key in range(count)]
        else:
            pairs = [(query, index, float(self._weights[query, index])) for query in range(count)]
        return [pair for pair in pairs if pair[2] >= FAINTEST]

    def mouseMoveEvent(self, event):
        focus = self._token_at(QPointF(event.position()))
        if focus != self._focus:
            self._focus = focus
            self.update()
        super().mouseMoveEvent(event)

    def leaveEvent(self, event):
        if self._focus is not None:
            self._focus = None
            self.update()
        super().leaveEvent(event)

    def _tooltip_at(self, point):
        focus = self._token_at(point)
        return None if focus is None else self.weights_text(*focus)

    def weights_text(self, side, index):
        """The tooltip of a token: its largest weights, as the lines show them."""
        tokens = self._tokens
        if side == "query":
            row = self._weights[index]
            heading = f"{tokens[index]} attends to"
        else:
            row = self._weights[:, index]
            heading = f"attending to {tokens[index]}"
        order = np.argsort(-row, kind="stable")[:LISTED]
        listed = "\n".join(f"  {tokens[other]}: {float(row[other]):.3f}" for other in order)
        return f"{heading}:\n{listed}"
