"""The candidate endings of a multiple-choice context: one line each, added and removed."""

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QPushButton
from PySide6.QtWidgets import QToolButton
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

# A choice needs two endings; the editor never shows fewer rows.
MIN_ENDINGS = 2
# Rows a new editor starts with (SWAG has four endings).
START_ENDINGS = 4


class EndingsEditor(QWidget):
    """An editable list of endings: a line edit per ending with a remove button, and an
    "Add ending" button below.

    `endings()` is the tuple of non-blank endings in order (what `choose` is asked);
    `set_endings(texts)` replaces them. There are never fewer than `MIN_ENDINGS` rows.

    Signals:
        endings_changed(): an ending was typed, added or removed.
    """

    endings_changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._rows = []  # (row widget, line edit, remove button)
        self._rows_layout = QVBoxLayout()
        self._rows_layout.setContentsMargins(0, 0, 0, 0)
        self._rows_layout.setSpacing(4)
        self.add_button = QPushButton("Add ending")
        self.add_button.setObjectName("addEnding")
        self.add_button.setToolTip("Another candidate ending of the context.")
        self.add_button.clicked.connect(lambda: self.add_ending(focus=True))
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(self._rows_layout)
        layout.addLayout(buttons)
        for _ in range(START_ENDINGS):
            self.add_ending()

    def line_edits(self):
        """The line edits, one per ending row."""
        return [edit for _, edit, _ in self._rows]

    def endings(self):
        """The non-blank endings, in order."""
        return tuple(edit.text().strip() for edit in self.line_edits() if edit.text().strip())

    def add_ending(self, text="", focus=False):
        """Adds a row holding `text`; returns its line edit."""
        row = QWidget()
        edit = QLineEdit(text)
        edit.setObjectName(f"ending{len(self._rows)}")
        edit.setPlaceholderText(f"Ending {len(self._rows) + 1}")
        edit.setToolTip("A candidate continuation of the context.")
        edit.textChanged.connect(self.endings_changed)
        remove = QToolButton()
        remove.setText("−")
        remove.setToolTip("Remove this ending.")
        remove.clicked.connect(lambda: self.remove_ending(self.line_edits().index(edit)))
        row_layout = QHBoxLayout(row)
        row_layout.setContentsMargins(0, 0, 0, 0)
        row_layout.addWidget(edit, 1)
        row_layout.addWidget(remove)
        self._rows.append((row, edit, remove))
        self._rows_layout.addWidget(row)
        self._update_rows()
        if focus:
            edit.setFocus()
        if text:
            self.endings_changed.emit()
        return edit

    def remove_ending(self, position):
        """Removes the row at `position` (kept while only `MIN_ENDINGS` rows are left)."""
        if len(self._rows) <= MIN_ENDINGS:
            return
        row, edit, _ = self._rows.pop(position)
        had_text = bool(edit.text().strip())
        self._rows_layout.removeWidget(row)
        row.hide()  # at once: the deferred delete waits for the event loop
        row.deleteLater()
        self._update_rows()
        if had_text:
            self.endings_changed.emit()

    def set_endings(self, texts):
        """Replaces the endings with `texts` (rows are added up to `MIN_ENDINGS`)."""
        texts = list(texts)
        self.blockSignals(True)
        try:
            while len(self._rows) > max(len(texts), MIN_ENDINGS):
                self.remove_ending(len(self._rows) - 1)
            while len(self._rows) < len(texts):
                self.add_ending()
            for index, edit in enumerate(self.line_edits()):
                edit.setText(texts[index] if index < len(texts) else "")
        finally:
            self.blockSignals(False)
        self.endings_changed.emit()

    def _update_rows(self):
        for index, (_, edit, remove) in enumerate(self._rows):
            edit.setObjectName(f"ending{index}")
            edit.setPlaceholderText(f"Ending {index + 1}")
            remove.setEnabled(len(self._rows) > MIN_ENDINGS)
