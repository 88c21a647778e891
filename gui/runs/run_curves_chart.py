"""Several runs' evaluation scores per epoch on one chart, one colour per run."""

from PySide6.QtCore import QPointF
from PySide6.QtCore import QRectF
from PySide6.QtCore import QSize
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtGui import QPainter
from PySide6.QtGui import QPen
from PySide6.QtWidgets import QWidget

from kbert_gui.widgets import style

MARGIN = 10
AXIS_ROOM = 44  # the y labels' width
LEGEND_LINE = 18
EMPTY_TEXT = "Select runs above to compare their evaluation scores per epoch."


class RunCurvesChart(QWidget):
    """Lines of `(epoch, score)` points, one per run, on shared axes, with a legend.

    `set_curves([(name, points), ...])` shows them (a run without points is left out of
    the plot but named in the legend as "no curve"); `curves` is what is shown. The y
    axis spans the scores (percentages and fractions are not mixed by the Runs view:
    it passes the scores as the runs' tables write them), the x axis the epochs.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("runCurves")
        self._curves = []
        self.y_title = ""

    @property
    def curves(self):
        return list(self._curves)

    def set_curves(self, curves, y_title=""):
        self._curves = [(str(name), tuple(points)) for name, points in curves]
        self.y_title = y_title
        self.update()

    def sizeHint(self):
        return QSize(480, 260)

    def color(self, index):
        palette = style.RUN_CURVES
        return QColor(palette[index % len(palette)])

    def plot_rect(self):
        legend = len(self._curves) * LEGEND_LINE
        return QRectF(
            MARGIN + AXIS_ROOM,
            MARGIN + LEGEND_LINE,
            max(self.width() - 2 * MARGIN - AXIS_ROOM, 1),
            max(self.height() - 2 * MARGIN - 2 * LEGEND_LINE - legend, 1),
        )

    def ranges(self):
        """`((first epoch, last epoch), (lowest, highest score))` of the curves shown."""
        points = [point for _, curve in self._curves for point in curve]
        epochs = [epoch for epoch, _ in points] or [1]
        values = [value for _, value in points] or [0.0]
        low, high = min(values), max(values)
        if high - low < 1e-9:
            low, high = low - 0.5, high + 0.5
        return (min(epochs), max(max(epochs), min(epochs) + 1)), (low, high)

    def point_at(self, epoch, value):
        """Where `(epoch, value)` is drawn, in widget coordinates."""
        plot = self.plot_rect()
        (first, last), (low, high) = self.ranges()
        x = plot.left() + (epoch - first) / (last - first) * plot.width()
        y = plot.bottom() - (value - low) / (high - low) * plot.height()
        return QPointF(x, y)

    def paintEvent(self, event):
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), self.palette().base())
        if not any(curve for _, curve in self._curves):
            painter.setPen(QColor(style.MUTED_TEXT))
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, EMPTY_TEXT)
            return
        self._draw_axes(painter)
        for index, (_, curve) in enumerate(self._curves):
            painter.setPen(QPen(self.color(index), 2))
            points = [self.point_at(epoch, value) for epoch, value in curve]
            for start, end in zip(points, points[1:]):
                painter.drawLine(start, end)
            for point in points:
                painter.drawEllipse(point, 3, 3)
        self._draw_legend(painter)

    def _draw_axes(self, painter):
        plot = self.plot_rect()
        (first, last), (low, high) = self.ranges()
        painter.setPen(QColor(style.CHART_AXIS))
        painter.drawRect(plot)
        align_right = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        for value in (low, (low + high) / 2, high):
            y = self.point_at(first, value).y()
            painter.drawText(QRectF(MARGIN, y - 8, AXIS_ROOM - 4, 16), align_right, f"{value:.3g}")
        for epoch in range(int(first), int(last) + 1):
            x = self.point_at(epoch, low).x()
            painter.drawText(
                QRectF(x - 20, plot.bottom() + 2, 40, LEGEND_LINE),
                int(Qt.AlignmentFlag.AlignCenter),
                str(epoch),
            )
        painter.drawText(
            QRectF(plot.left(), MARGIN, plot.width(), LEGEND_LINE),
            int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
            f"{self.y_title} per epoch" if self.y_title else "score per epoch",
        )

    def _draw_legend(self, painter):
        top = self.plot_rect().bottom() + LEGEND_LINE + 2
        for index, (name, curve) in enumerate(self._curves):
            y = top + index * LEGEND_LINE
            painter.setPen(QPen(self.color(index), 3))
            painter.drawLine(QPointF(MARGIN, y + 9), QPointF(MARGIN + 18, y + 9))
            painter.setPen(self.palette().text().color())
            label = name if curve else f"{name} (no curve: the app's record of it is missing)"
            painter.drawText(
                QRectF(MARGIN + 24, y, self.width() - 2 * MARGIN - 24, LEGEND_LINE),
                int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                label,
            )
