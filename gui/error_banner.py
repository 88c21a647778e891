"""An inline error line: what went wrong, where the user is looking."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


class ErrorBanner(QLabel):
    """A red, word-wrapped, selectable message, hidden while there is no error.

    Tabs show errors here rather than in modal dialogs, so a failure never blocks the
    window and the message stays visible next to the input that caused it.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("errorBanner")
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setStyleSheet(
            "QLabel#errorBanner { color: #8a1c1c; background: #fdecea;"
            " border: 1px solid #f5c2c0; border-radius: 4px; padding: 6px; }"
        )
        self.hide()

    def show_error(self, message):
        self.setText(message)
        self.show()

    def clear_error(self):
        self.clear()
        self.hide()

    @property
    def message(self):
        """The shown message, or "" when there is none."""
        return self.text() if not self.isHidden() else ""
