"""Live training curves: the loss at every step and the evaluation metric at every epoch."""

import dataclasses
import itertools
import math

from PySide6.QtCore import QEvent
from PySide6.QtCore import QPointF
from PySide6.QtCore import QRectF
from PySide6.QtCore import QSize
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtGui import QPainter
from PySide6.QtGui import QPainterPath
from PySide6.QtGui import QPen
from PySide6.QtWidgets import QSizePolicy
from PySide6.QtWidgets import QWidget

from kbert_gui.fine_tuning.fine_tuning_format import TRAINING_LOSS
from kbert_gui.services.score_words import PERCENT_SCORES
from kbert_gui.services.score_words import score_text
from kbert_gui.widgets import style
from kbert_gui.widgets.axis_ticks import nice_ticks
from kbert_gui.widgets.axis_ticks import tick_label
from kbert_gui.widgets.axis_ticks import value_range

LOSS_COLOR = QColor(style.LOSS_CURVE)
METRIC_COLOR = QColor(style.METRIC_CURVE)
GRID_COLOR = QColor(style.CHART_GRID)
AXIS_COLOR = QColor(style.CHART_AXIS)
CHART_TOOLTIP = (
    "Training loss at every step: the running mean since the epoch began, as Keras "
    "reports it (so it steps at epoch starts); evaluation metric at every epoch end."
)
# The legend: its left margin, a colour swatch before each text, the gap after one.
LEGEND_LEFT, SWATCH, LEGEND_GAP = 12.0, 24.0, 28.0


class TrainingCurveChart(QWidget):
    """Two curves over the training steps, drawn with QPainter.

    The training loss (left axis, blue) gets a point per step; the evaluation metric
    (right axis, orange) a point per epoch, placed at the step where the epoch ended.
    Every point is kept (`loss_points`, `metric_points`); when there are more than
    pixels, drawing takes the minimum and maximum per pixel column, so a long run
    stays cheap to paint.

    A point at a step not after the previous one (a resumed run restarting from its
    checkpoint) replaces the points from that step on.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("trainingCurves")
        self.setMinimumSize(320, 180)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setToolTip(CHART_TOOLTIP)
        self._loss = []
        self._metric = []
        self._total_steps = 0
        self._loss_name = TRAINING_LOSS
        self._metric_name = "evaluation metric"
        self._metric_markers = True
        self._metric_words = (None, False)  # the metric's key and whether in percent

    def sizeHint(self):
        return QSize(640, 300)

    @property
    def loss_points(self):
        """`(step, loss)` pairs, in step order."""
        return tuple(self._loss)

    @property
    def metric_points(self):
        """`(step, value)` pairs, one per epoch."""
        return tuple(self._metric)

    def is_empty(self):
        """Whether no curve has a point."""
        return not self._loss and not self._metric

    def names(self):
        """`(loss name, metric name, metric markers)`, as `set_names` took them."""
        return self._loss_name, self._metric_name, self._metric_markers

    def set_points(self, loss_points, metric_points):
        """Shows these `(step, value)` points (a run's, read back from its record)."""
        self._loss = [(int(step), float(value)) for step, value in loss_points]
        self._metric = [(int(step), float(value)) for step, value in metric_points]
        self.update()

    def clear(self):
        self._loss.clear()
        self._metric.clear()
        self._total_steps = 0
        self.update()

    def set_total_steps(self, total_steps):
        """The run's length in steps: the x axis spans it from the start."""
        self._total_steps = int(total_steps)
        self.update()

    def set_names(self, loss_name, metric_name, metric_markers=True, metric_key=None,
                  in_percent=False):
        """The legend's names of the two curves; `metric_markers` draws a dot at each
        metric point (off for a per-step metric). With the metric's `metric_key`
        ("accuracy") the legend and the right axis write its values as the tab does
        ("87.5 %"); `in_percent`: the values are percentages already (SQuAD's)."""
        self._loss_name, self._metric_name = loss_name, metric_name
        self._metric_markers = metric_markers
        self._metric_words = (metric_key, in_percent)
        self.update()

    def _metric_text(self, value, ticks=None):
        """A metric value as the legend (`ticks` None) or the right axis writes it."""
        key, in_percent = self._metric_words
        if key not in PERCENT_SCORES:
            return f"{value:.4g}" if ticks is None else tick_label(value, ticks)
        if ticks is None:
            return score_text(key, value, in_percent)
        scale = 1 if in_percent else 100
        return f"{tick_label(scale * value, [scale * tick for tick in ticks])} %"

    def add_loss_point(self, step, loss):
        _append(self._loss, step, loss)
        self.update()

    def add_metric_point(self, step, value):
        _append(self._metric, step, value)
        self.update()

    # --- Painting --------------------------------------------------------------------

    def paintEvent(self, event):
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), self.palette().base())
        line_height = painter.fontMetrics().height()
        plot = self.plot_rect()
        if plot.width() < 40 or plot.height() < 40:
            return
        self._draw_legend(painter, line_height)
        if not self._loss and not self._metric:
            painter.setPen(AXIS_COLOR)
            painter.drawText(
                plot, Qt.AlignmentFlag.AlignCenter, "The curves appear when training starts."
            )
            painter.setPen(QPen(AXIS_COLOR, 1))
            painter.drawRect(plot)
            return
        axes = _Axes(plot, self._loss, self._metric, self._total_steps)
        self._draw_grid(painter, axes)
        self._draw_tick_labels(painter, axes, line_height)
        painter.setClipRect(plot.adjusted(-4, -4, 4, 4))
        self._draw_loss(painter, axes)
        if self._metric:
            self._draw_metric(painter, axes)

    def plot_rect(self):
        """The area inside the axes: room for the widest tick label on either side (so
        no label is cut off), the legend above and the step labels below."""
        metrics = self.fontMetrics()
        loss_labels, metric_labels = self.tick_labels()
        left, right = (
            max(metrics.horizontalAdvance(label) for label in ("0.000", *labels)) + 14
            for labels in (loss_labels, metric_labels)
        )
        line_height = metrics.height()
        return QRectF(
            left,
            line_height * 2 + 8,
            self.width() - left - right,
            self.height() - line_height * 4 - 18,
        )

    def tick_labels(self):
        """The texts on the left (loss) and the right (metric) axis."""
        axes = _Axes(QRectF(0, 0, 1, 1), self._loss, self._metric, self._total_steps)
        metric = [self._metric_text(value, axes.metric_ticks) for value in axes.metric_ticks]
        return (
            [tick_label(value, axes.loss_ticks) for value in axes.loss_ticks],
            metric if self._metric else [],
        )

    def _draw_grid(self, painter, axes):
        plot = axes.plot
        painter.setPen(QPen(GRID_COLOR, 1))
        for value in axes.loss_ticks:
            y = axes.loss_y(value)
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
        for step in axes.x_ticks:
            x = axes.x(step)
            painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
        painter.setPen(QPen(AXIS_COLOR, 1))
        painter.drawRect(plot)

    def _draw_tick_labels(self, painter, axes, line_height):
        plot = axes.plot
        painter.setPen(LOSS_COLOR)
        for value in axes.loss_ticks:
            painter.drawText(
                QRectF(0, axes.loss_y(value) - line_height / 2, plot.left() - 6, line_height),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                tick_label(value, axes.loss_ticks),
            )
        if self._metric:
            painter.setPen(METRIC_COLOR)
            for value in axes.metric_ticks:
                y = axes.metric_y(value)
                painter.drawText(
                    QRectF(plot.right() + 6, y - line_height / 2, self.width(), line_height),
                    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                    self._metric_text(value, axes.metric_ticks),
                )
        painter.setPen(AXIS_COLOR)
        for step in axes.x_ticks:
            painter.drawText(
                QRectF(axes.x(step) - 40, plot.bottom() + 4, 80, line_height),
                Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop,
                str(int(step)),
            )
        painter.drawText(
            QRectF(plot.left(), plot.bottom() + line_height + 4, plot.width(), line_height),
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop,
            "step",
        )

    def _draw_loss(self, painter, axes):
        loss_path = QPainterPath()
        points = _thin(self._loss, int(axes.plot.width()), axes.x_max)
        for index, (step, value) in enumerate(points):
            point = QPointF(axes.x(step), axes.loss_y(value))
            if index == 0:
                loss_path.moveTo(point)
            else:
                loss_path.lineTo(point)
        painter.setPen(QPen(LOSS_COLOR, 1.6))
        painter.drawPath(loss_path)

    def _draw_metric(self, painter, axes):
        points = [QPointF(axes.x(step), axes.metric_y(value)) for step, value in self._metric]
        painter.setPen(QPen(METRIC_COLOR, 2))
        for start, end in itertools.pairwise(points):
            painter.drawLine(start, end)
        if self._metric_markers:
            painter.setBrush(METRIC_COLOR)
            for point in points:
                painter.drawEllipse(point, 3.5, 3.5)

    def _draw_legend(self, painter, line_height):
        for entry, color in zip(self.legend_entries(), (LOSS_COLOR, METRIC_COLOR)):
            rect = entry.rect
            middle = rect.top() + line_height / 2
            painter.setPen(QPen(color, 3))
            painter.drawLine(QPointF(rect.left() - 24, middle), QPointF(rect.left() - 6, middle))
            painter.setPen(self.palette().text().color())
            painter.drawText(QPointF(rect.left(), rect.top() + line_height * 0.78), entry.shown)

    def legend_entries(self):
        """The legend's two `LegendEntry`s: each text after its colour swatch, side by
        side; where both do not fit in the width, each is elided to its share of it
        (whole in `legend_tooltip`)."""
        metrics = self.fontMetrics()
        texts = [
            name if not values else f"{name}: {text(values[-1][1])}"
            for name, values, text in (
                (self._loss_name, self._loss, lambda value: f"{value:.4g}"),
                (self._metric_name, self._metric, self._metric_text),
            )
        ]
        widths = [metrics.horizontalAdvance(text) for text in texts]
        room = max(self.width() - LEGEND_LEFT - len(texts) * (SWATCH + LEGEND_GAP), 0)
        crowded = sum(widths) > room
        if crowded:
            widths = _shares(widths, room)
        entries, x = [], LEGEND_LEFT
        for text, width in zip(texts, widths):
            # Only where the texts do not fit: Qt's elision measures a text ending in " %"
            # a pixel wider than its advance, and would cut one that fits.
            shown = text
            if crowded:
                shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, int(width))
            rect = QRectF(x + SWATCH, 6.0, width, metrics.height())
            entries.append(LegendEntry(text, shown, rect))
            x += SWATCH + width + LEGEND_GAP
        return entries

    def legend_tooltip(self):
        """The chart's tooltip: what the curves are, and the legend's texts in full."""
        names = "\n".join(entry.text for entry in self.legend_entries())
        return f"{CHART_TOOLTIP}\n\n{names}"

    def event(self, event):
        if event.type() == QEvent.Type.ToolTip:
            self.setToolTip(self.legend_tooltip())
        return super().event(event)


@dataclasses.dataclass(frozen=True)
class LegendEntry:
    """One legend text: `text` in full, `shown` as drawn (elided to fit), `rect` where."""

    text: str
    shown: str
    rect: QRectF


def _shares(widths, room):
    """Widths that add up to `room`: a text narrower than an even share keeps its width,
    the others split what is left evenly."""
    shares = list(widths)
    even = room / len(widths)
    narrow = [width for width in widths if width <= even]
    wide_count = len(widths) - len(narrow)
    if wide_count:
        each = (room - sum(narrow)) / wide_count
        shares = [width if width <= even else each for width in widths]
    return shares


class _Axes:
    """Where steps and values go in the plot: round ticks covering the points (the x
    axis spans at least the run's `total_steps`), the loss on the left axis from 0, the
    metric on the right one."""

    def __init__(self, plot, loss, metric, total_steps):
        self.plot = plot
        last_step = max([point[0] for point in loss[-1:] + metric[-1:]] + [total_steps, 1])
        self.x_ticks = nice_ticks(0, last_step, integer=True)
        self.x_max = max(self.x_ticks[-1], last_step)
        self.loss_ticks = nice_ticks(*value_range([value for _, value in loss], True))
        self.metric_ticks = nice_ticks(*value_range([value for _, value in metric], False))

    def x(self, step):
        return self.plot.left() + self.plot.width() * step / self.x_max

    def loss_y(self, value):
        return self._y(value, self.loss_ticks)

    def metric_y(self, value):
        return self._y(value, self.metric_ticks)

    def _y(self, value, ticks):
        low, high = ticks[0], ticks[-1]
        return self.plot.bottom() - self.plot.height() * (value - low) / (high - low)


def _append(points, step, value):
    if value is None or not math.isfinite(value):
        return
    while points and points[-1][0] >= step:
        points.pop()
    points.append((step, float(value)))


def _thin(points, width, x_max):
    """At most two points (the lowest and the highest) per pixel column, in step order."""
    if len(points) <= 2 * max(width, 1):
        return points
    columns = {}
    for point in points:
        columns.setdefault(int(point[0] / x_max * width), []).append(point)
    thinned = []
    for column in sorted(columns):
        members = columns[column]
        extremes = {
            min(members, key=lambda point: point[1]),
            max(members, key=lambda point: point[1]),
        }
        thinned.extend(sorted(extremes))
    return thinned
