"""An inline error line: what went wrong, where the user is looking."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QToolButton

from kbert_gui.widgets import style
from kbert_gui.widgets.message_banner import MessageBanner


class ErrorBanner(MessageBanner):
    """A red, word-wrapped, selectable message, hidden while there is no error.

    Tabs show errors here rather than in modal dialogs, so a failure never blocks the
    window and the message stays visible next to the input that caused it. Its close
    button (`close_button`, "✕") dismisses it; whoever shows it clears it once the next
    action succeeds.
    """

    def __init__(self, parent=None):
        super().__init__("errorBanner", style.ERROR, parent)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.close_button = QToolButton(self)
        self.close_button.setObjectName("dismissError")
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss this message")
        self.close_button.setAutoRaise(True)
        self.close_button.setCursor(Qt.CursorShape.ArrowCursor)
        self.close_button.clicked.connect(self.clear_error)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 2, 0)
        layout.addStretch(1)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        # The text keeps clear of the button.
        self.setContentsMargins(0, 0, self.close_button.sizeHint().width() + 2, 0)

    def show_error(self, message):
        self.show_message(message)

    def clear_error(self):
        self.clear_message()
