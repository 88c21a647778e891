"""A message shown inline, next to what it is about, instead of in a dialog."""

from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QSizePolicy

from kbert_gui.widgets import style


class MessageBanner(QLabel):
    """A word-wrapped message in a coloured box, hidden while there is none.

    `ErrorBanner` and `WarningBanner` are its two kinds; `show_message` shows a text,
    `clear_message` hides it, and `message` is what is shown ("" when hidden). The box
    is as high as its text wrapped to the width it is given: a one-line message takes
    one line, not the lines a narrow default width would wrap it to.

    Args:
        object_name: the Qt object name the style sheet is keyed on.
        colors: its `style.MessageColors` (`style.ERROR`, `style.WARNING`).
        parent: the parent widget.
        right_padding: room (pixels) its text leaves at the right, for a button there.
    """

    def __init__(self, object_name, colors, parent=None, right_padding=style.MESSAGE_PADDING):
        super().__init__(parent)
        self.setObjectName(object_name)
        self.setWordWrap(True)
        self.setStyleSheet(style.message_style(object_name, colors, right_padding))
        # The height follows the width (heightForWidth), never a wrap at a guessed width.
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.hide()

    def show_message(self, message):
        self.setText(message)
        self.show()

    def clear_message(self):
        self.clear()
        self.hide()

    @property
    def message(self):
        """The shown message, or "" when there is none."""
        return self.text() if not self.isHidden() else ""
