"""A one-line label that shortens its text with "…" to the width it is given."""

from PySide6.QtCore import QSize
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QSizePolicy


class ElidedLabel(QLabel):
    """A `QLabel` for one line of plain text that never widens its window.

    `text()` is the whole text; what is shown (`shown_text()`)
    is cut in the middle with "…" to fit the label's width, so a long model path in the
    tool bar still leaves the window usable at 800 px.

    Args:
        text: the text.
        minimum_characters: roughly how many characters it shows at the least.
        parent: the parent widget.
    """

    def __init__(self, text="", minimum_characters=12, parent=None):
        super().__init__(parent)
        self._full_text = ""
        self._minimum_characters = minimum_characters
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text):
        self._full_text = str(text)
        self._elide()
        self.updateGeometry()

    def text(self):
        return self._full_text

    def shown_text(self):
        """The text as drawn: cut to the label's width."""
        return super().text()

    def sizeHint(self):
        metrics = self.fontMetrics()
        return QSize(metrics.horizontalAdvance(self._full_text) + 4, super().sizeHint().height())

    def minimumSizeHint(self):
        width = self.fontMetrics().averageCharWidth() * self._minimum_characters
        return QSize(width, super().minimumSizeHint().height())

    def resizeEvent(self, event):
        super().resizeEvent(event)
        self._elide()

    def _elide(self):
        shown = self.fontMetrics().elidedText(
            self._full_text, Qt.TextElideMode.ElideMiddle, max(self.width(), 1)
        )
        super().setText(shown)
