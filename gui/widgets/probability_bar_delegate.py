"""Draws a probability as a horizontal bar behind its percentage."""

from PySide6.QtCore import QRectF
from PySide6.QtCore import QSize
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication
from PySide6.QtWidgets import QStyle
from PySide6.QtWidgets import QStyledItemDelegate
from PySide6.QtWidgets import QStyleOptionViewItem

from kbert_gui.widgets import style


class ProbabilityBarDelegate(QStyledItemDelegate):
    """Paints the cell's probability (a float in [0, 1] under `role`) as a bar.

    The bar fills the cell's width in proportion to the probability, with the
    cell's display text ("41.2 %") drawn over it on the right; a cell without a
    probability (None) shows its text alone.

    Args:
        role: the item data role holding the probability.
        color: the bar colour.
        parent: the owning QObject.
    """

    def __init__(self, role, color=style.PROBABILITY_BAR, parent=None):
        super().__init__(parent)
        self._role = role
        self._color = QColor(color)

    def paint(self, painter, option, index):
        option = QStyleOptionViewItem(option)
        self.initStyleOption(option, index)
        text = option.text
        option.text = ""
        widget_style = option.widget.style() if option.widget else QApplication.style()
        widget_style.drawControl(
            QStyle.ControlElement.CE_ItemViewItem, option, painter, option.widget
        )

        probability = index.data(self._role)
        track = QRectF(option.rect).adjusted(4, 5, -4, -5)
        painter.save()
        painter.setRenderHint(painter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(style.PROBABILITY_TRACK))
        if probability is not None:  # without one, the cell's text only ("—")
            probability = min(max(float(probability), 0.0), 1.0)
            painter.drawRoundedRect(track, 3, 3)
        if probability:
            bar = QRectF(track)
            bar.setWidth(max(track.width() * probability, 2.0))
            painter.setBrush(self._color)
            painter.drawRoundedRect(bar, 3, 3)
        selected = option.state & QStyle.StateFlag.State_Selected
        painter.setPen(option.palette.highlightedText().color() if selected else QColor(style.INK))
        painter.drawText(
            track.adjusted(6, 0, -6, 0),
            int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
            text,
        )
        painter.restore()

    def sizeHint(self, option, index):
        size = super().sizeHint(option, index)
        return QSize(max(size.width(), 160), max(size.height(), 24))
