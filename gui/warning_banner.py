"""An inline warning: the model can do this, but not well (an untrained head, no head)."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


class WarningBanner(QLabel):
    """An amber, word-wrapped rich-text message, hidden until `show_warning`.

    Like `ErrorBanner`, it sits next to what it is about instead of opening a dialog;
    its links (`<a href="fine-tuning">`) emit `linkActivated` with their href, which a
    tab passes on as a tab request.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("warningBanner")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setStyleSheet(
            "QLabel#warningBanner { color: #6d4c00; background: #fff8e1;"
            " border: 1px solid #ffe082; border-radius: 4px; padding: 6px; }"
        )
        self.hide()

    def show_warning(self, message):
        self.setText(message)
        self.show()

    def clear_warning(self):
        self.clear()
        self.hide()

    @property
    def message(self):
        """The shown message, or "" when there is none."""
        return self.text() if not self.isHidden() else ""
