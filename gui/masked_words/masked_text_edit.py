"""The "Masked words" text box: type text, insert [MASK], double-click a word to mask it."""

from PySide6.QtGui import QColor
from PySide6.QtGui import QFont
from PySide6.QtGui import QTextCharFormat
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit
from PySide6.QtWidgets import QTextEdit

from kbert_gui.widgets import style

MASK_TOKEN = "[MASK]"
# Shown where predictions would be while the text has no mask.
NO_MASK_HINT = (
    "Type [MASK] or double-click a word to mask it (Ctrl+M inserts [MASK] at the "
    "cursor); the most probable words for each mask appear here."
)


class MaskedTextEdit(QPlainTextEdit):
    """A plain-text box that knows about `[MASK]`.

    `insert_mask()` puts `[MASK]` at the cursor (or over the selection), a
    double-click on a word replaces the word with `[MASK]`, and every `[MASK]` in
    the text is highlighted. Positions in the public methods are Python string
    indices into `toPlainText()` (as kbert's results use), converted here to Qt's
    UTF-16 positions, so text with emoji or other astral characters works.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("maskedTextEdit")
        self.setPlaceholderText(
            "Type or paste a sentence, e.g. “The cat sat on the [MASK].” "
            "Double-click a word to mask it."
        )
        self.setToolTip(
            "The text to explore. Type [MASK] (or press Ctrl+M) where a word should be "
            "predicted; double-click a word to replace it with [MASK]."
        )
        font = self.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        self.setFont(font)
        self.setTabChangesFocus(True)
        self.textChanged.connect(self._highlight_masks)

    # --- Editing ----------------------------------------------------------------------

    def insert_mask(self):
        """Puts `[MASK]` at the cursor, replacing any selection, with a space before
        or after it where it would otherwise run into a word."""
        cursor = self.textCursor()
        text = self.toPlainText()
        start = _python_index(text, cursor.selectionStart())
        end = _python_index(text, cursor.selectionEnd())
        before = text[start - 1] if start > 0 else ""
        after = text[end] if end < len(text) else ""
        replacement = MASK_TOKEN
        if _is_word_character(before) or before in ".,;:!?":
            replacement = " " + replacement
        if _is_word_character(after):
            replacement = replacement + " "
        cursor.insertText(replacement)
        self.setTextCursor(cursor)
        self.setFocus()

    def mask_word_at(self, index):
        """Replaces the word around Python index `index` with `[MASK]`.

        Returns:
            The word's `(start, end)` before the replacement, or None when there is no
            word there (whitespace, punctuation, or an existing `[MASK]`).
        """
        text = self.toPlainText()
        span = word_span(text, index)
        if span is not None:
            self.replace_span(*span, MASK_TOKEN)
        return span

    def replace_span(self, start, end, replacement):
        """Replaces `text[start:end]` (Python indices) by `replacement`, as one undo step,
        and leaves the cursor after it."""
        text = self.toPlainText()
        cursor = QTextCursor(self.document())
        cursor.setPosition(_qt_position(text, start))
        cursor.setPosition(_qt_position(text, end), QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(replacement)
        self.setTextCursor(cursor)

    def mouseDoubleClickEvent(self, event):
        cursor = self.cursorForPosition(event.position().toPoint())
        text = self.toPlainText()
        index = _python_index(text, cursor.position())
        # The click may land just after the word's last character.
        for candidate in (index, index - 1):
            if 0 <= candidate < len(text) and word_span(text, candidate) is not None:
                self.mask_word_at(candidate)
                event.accept()
                return
        super().mouseDoubleClickEvent(event)

    # --- Looks ------------------------------------------------------------------------

    def _highlight_masks(self):
        text = self.toPlainText()
        highlight = QTextCharFormat()
        highlight.setBackground(QColor(style.MASK_BACKGROUND))
        highlight.setForeground(QColor(style.MASK_TEXT))
        highlight.setFontWeight(QFont.Weight.DemiBold)
        selections = []
        start = text.find(MASK_TOKEN)
        while start != -1:
            selection = QTextEdit.ExtraSelection()
            selection.format = highlight
            selection.cursor = QTextCursor(self.document())
            selection.cursor.setPosition(_qt_position(text, start))
            selection.cursor.setPosition(
                _qt_position(text, start + len(MASK_TOKEN)), QTextCursor.MoveMode.KeepAnchor
            )
            selections.append(selection)
            start = text.find(MASK_TOKEN, start + len(MASK_TOKEN))
        self.setExtraSelections(selections)


def word_span(text, index):
    """`(start, end)` of the word holding `text[index]`, or None.

    A word is a run of letters, digits and underscores; a `[MASK]` already in
    the text is not a word.
    """
    if not 0 <= index < len(text) or not _is_word_character(text[index]):
        return None
    start = index
    while start > 0 and _is_word_character(text[start - 1]):
        start -= 1
    end = index + 1
    while end < len(text) and _is_word_character(text[end]):
        end += 1
    # A [MASK] is "MASK" between brackets: leave it alone.
    mask_start = text.rfind(MASK_TOKEN, 0, end + 1)
    if mask_start != -1 and mask_start <= start and end <= mask_start + len(MASK_TOKEN):
        return None
    return start, end


def _is_word_character(character):
    return bool(character) and (character.isalnum() or character == "_")


def _qt_position(text, index):
    """Qt counts UTF-16 code units; Python counts code points."""
    return len(text[:index].encode("utf-16-le")) // 2


def _python_index(text, position):
    encoded = text.encode("utf-16-le")
    return len(encoded[: 2 * position].decode("utf-16-le", errors="ignore"))
