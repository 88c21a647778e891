"""A dialog that only shows something: its content above a Close button."""

from PySide6.QtWidgets import QDialogButtonBox
from PySide6.QtWidgets import QVBoxLayout


def lay_out_with_close_button(dialog, content):
    """Lays `dialog` out as `content` (taking the spare height) above a Close button
    that closes it (Esc does too)."""
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.reject)
    layout = QVBoxLayout(dialog)
    layout.addWidget(content, 1)
    layout.addWidget(buttons)
