"""An inline error line: what went wrong, where the user is looking."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton

from kbert_gui.widgets import style
from kbert_gui.widgets.message_banner import MessageBanner

# Room between the close button and the box's edges, in pixels.
BUTTON_INSET = 2


class ErrorBanner(MessageBanner):
    """A red, word-wrapped, selectable message, hidden while there is no error.

    Tabs show errors here rather than in modal dialogs, so a failure never blocks the
    window and the message stays visible next to the input that caused it. Its close
    button (`close_button`, "✕") sits in the box's top right corner, in room the text
    leaves free, so a one-line error is one line high; it dismisses the message, and
    whoever shows it clears it once the next action succeeds.
    """

    def __init__(self, parent=None):
        button = QToolButton()
        button.setText("✕")
        room = button.sizeHint().width() + 2 * BUTTON_INSET
        super().__init__("errorBanner", style.ERROR, parent, right_padding=room)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Placed by hand, not by a layout: a layout inside the label would make the
        # box as high as the label's size hint (text wrapped at a guessed width).
        self.close_button = button
        button.setParent(self)
        button.setObjectName("dismissError")
        button.setToolTip("Dismiss this message")
        button.setAutoRaise(True)
        button.setCursor(Qt.CursorShape.ArrowCursor)
        button.clicked.connect(self.clear_error)

    def resizeEvent(self, event):
        super().resizeEvent(event)
        button = self.close_button
        size = button.sizeHint()
        top = max((min(self.height(), self._one_line_height()) - size.height()) // 2, 0)
        button.setGeometry(self.width() - size.width() - BUTTON_INSET, top, size.width(), size.height())

    def _one_line_height(self):
        return self.fontMetrics().height() + 2 * (style.MESSAGE_PADDING + 1)

    def show_error(self, message):
        self.show_message(message)

    def clear_error(self):
        self.clear_message()
