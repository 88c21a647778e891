"""A 2-D map of the examples' sentence embeddings, coloured, its selection shared."""

from PySide6.QtCore import QPointF
from PySide6.QtCore import QRectF
from PySide6.QtCore import Qt
from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtGui import QPainter
from PySide6.QtGui import QPen
from PySide6.QtWidgets import QWidget

from kbert_gui.widgets import style

MARGIN = 12.0
RADIUS = 4.0
# How near a click must fall to a point to pick it, in pixels.
PICK_DISTANCE = 8.0


class EmbeddingMap(QWidget):
    """Points at 2-D coordinates (one per example, in file order), each coloured by a
    value (a label, a prediction, right/wrong); the selected ones ringed.

    A click picks the nearest point (Ctrl adds or removes it) and emits
    `selection_changed(list of positions)`; `set_selected` rings the table's
    selection without emitting, so the two never echo each other.

    Args:
        parent: the parent widget.
    """

    selection_changed = Signal(list)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("embeddingMap")
        self.setMinimumSize(220, 180)
        self._coordinates = []
        self._values = []
        self._colors = {}
        self._selected = set()
        self._message = "The map appears once the examples' embeddings are computed."

    def set_message(self, message):
        self._message = message
        self.update()

    def set_points(self, coordinates, values):
        """`coordinates`: (N, 2) numbers; `values`: what colours each point (N)."""
        self._coordinates = [(float(x), float(y)) for x, y in coordinates]
        self.set_values(values)

    def set_values(self, values):
        self._values = list(values)
        order = sorted({str(value) for value in self._values})
        self._colors = {
            value: QColor(style.CATEGORY_COLORS[index % len(style.CATEGORY_COLORS)]) for index, value in enumerate(order)
        }
        self.update()

    def legend(self):
        """`{value: colour name}` of the values shown."""
        return {value: color.name() for value, color in self._colors.items()}

    def selected(self):
        return sorted(self._selected)

    def set_selected(self, positions):
        self._selected = set(int(position) for position in positions)
        self.update()

    def point_at(self, position):
        """Where the point of record `position` is drawn (a QPointF)."""
        return self._placed()[position]

    def _placed(self):
        if not self._coordinates:
            return []
        xs = [x for x, _ in self._coordinates]
        ys = [y for _, y in self._coordinates]
        low_x, high_x, low_y, high_y = min(xs), max(xs), min(ys), max(ys)
        width = self.width() - 2 * MARGIN
        height = self.height() - 2 * MARGIN - self.fontMetrics().height()
        span_x, span_y = max(high_x - low_x, 1e-9), max(high_y - low_y, 1e-9)
        return [
            QPointF(
                MARGIN + width * (x - low_x) / span_x,
                MARGIN + height * (1 - (y - low_y) / span_y),
            )
            for x, y in self._coordinates
        ]

    def mousePressEvent(self, event):
        points = self._placed()
        if not points:
            return
        click = event.position()
        distances = [(point - click).manhattanLength() for point in points]
        nearest = min(range(len(points)), key=distances.__getitem__)
        adding = event.modifiers() & Qt.KeyboardModifier.ControlModifier
        if distances[nearest] > PICK_DISTANCE * 1.5:
            chosen = self._selected if adding else set()
        elif adding:
            chosen = self._selected ^ {nearest}
        else:
            chosen = {nearest}
        self._selected = set(chosen)
        self.update()
        self.selection_changed.emit(sorted(self._selected))

    def paintEvent(self, event):
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), self.palette().base())
        points = self._placed()
        if not points:
            painter.setPen(QColor(style.CHART_AXIS))
            painter.drawText(
                QRectF(self.rect()), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                self._message,
            )
            return
        painter.setPen(Qt.PenStyle.NoPen)
        for point, value in zip(points, self._values):
            painter.setBrush(self._colors[str(value)])
            painter.drawEllipse(point, RADIUS, RADIUS)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(QPen(QColor(self.palette().text().color()), 2))
        for position in self._selected:
            painter.drawEllipse(points[position], RADIUS + 3, RADIUS + 3)
        self._draw_legend(painter)

    def _draw_legend(self, painter):
        x, y = MARGIN, self.height() - 4.0
        metrics = painter.fontMetrics()
        for value, color in self._colors.items():
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(color)
            painter.drawEllipse(QPointF(x + RADIUS, y - metrics.height() / 3), RADIUS, RADIUS)
            painter.setPen(self.palette().text().color())
            painter.drawText(QPointF(x + 2 * RADIUS + 4, y), value)
            x += 2 * RADIUS + 16 + metrics.horizontalAdvance(value)
