"""An inline warning: the model can do this, but not well (an untrained head, no head)."""

from PySide6.QtCore import Qt

from kbert_gui.widgets import style
from kbert_gui.widgets.message_banner import MessageBanner


class WarningBanner(MessageBanner):
    """An amber, word-wrapped rich-text message, hidden until `show_warning`.

    Like `ErrorBanner`, it sits next to what it is about instead of opening a dialog;
    its links (`<a href="fine-tuning">`) emit `linkActivated` with their href, which a
    tab passes on as a tab request.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__("warningBanner", style.WARNING, parent)
        self.setTextFormat(Qt.TextFormat.RichText)

    def show_warning(self, message):
        self.show_message(message)

    def clear_warning(self):
        self.clear_message()
