"""A message shown inline, next to what it is about, instead of in a dialog."""

from PySide6.QtWidgets import QLabel

from kbert_gui.widgets import style


class MessageBanner(QLabel):
    """A word-wrapped message in a coloured box, hidden while there is none.

    `ErrorBanner` and `WarningBanner` are its two kinds; `show_message` shows a text,
    `clear_message` hides it, and `message` is what is shown ("" when hidden).

    Args:
        object_name: the Qt object name the style sheet is keyed on.
        colors: its `style.MessageColors` (`style.ERROR`, `style.WARNING`).
        parent: the parent widget.
    """

    def __init__(self, object_name, colors, parent=None):
        super().__init__(parent)
        self.setObjectName(object_name)
        self.setWordWrap(True)
        self.setStyleSheet(style.message_style(object_name, colors))
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
