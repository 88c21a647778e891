"""An inline error line: what went wrong, where the user is looking."""

from PySide6.QtCore import Qt

from kbert_gui.widgets import style
from kbert_gui.widgets.message_banner import MessageBanner


class ErrorBanner(MessageBanner):
    """A red, word-wrapped, selectable message, hidden while there is no error.

    Tabs show errors here rather than in modal dialogs, so a failure never blocks the
    window and the message stays visible next to the input that caused it.
    """

    def __init__(self, parent=None):
        super().__init__("errorBanner", style.ERROR, parent)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def show_error(self, message):
        self.show_message(message)

    def clear_error(self):
        self.clear_message()
