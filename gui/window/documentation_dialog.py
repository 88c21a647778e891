"""Help ▸ Documentation (F1): the README, rendered in the app."""

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QDialog
from PySide6.QtWidgets import QTextBrowser

from kbert_gui.widgets.close_button_layout import lay_out_with_close_button


# The README's heading of the app's own part: where Help ▸ Documentation opens.
APP_SECTION = "The desktop app"


class DocumentationDialog(QDialog):
    """The project's README as a page: headings, tables, code and its pictures.

    Links to web pages open in the browser; the README's relative pictures are found
    beside it (in a source checkout). It opens at the heading `section` (the app's own
    part of the README), or at the top where there is no such heading.

    Args:
        markdown: the README's text.
        folder: the folder its relative links point into, or None.
        parent: the parent widget.
        section: the heading's text to open at.
    """

    def __init__(self, markdown, folder=None, parent=None, section=APP_SECTION):
        super().__init__(parent)
        self.setWindowTitle("kbert documentation")
        self.browser = QTextBrowser()
        self.browser.setObjectName("documentationBrowser")
        self.browser.setOpenExternalLinks(True)
        if folder is not None:
            self.browser.setSearchPaths([str(folder)])
        self.browser.setMarkdown(markdown)
        self._section = _heading_position(self.browser.document(), section)
        lay_out_with_close_button(self, self.browser)
        self.resize(900, 700)

    def showEvent(self, event):
        super().showEvent(event)
        if self._section is not None:
            # Laid out now: the heading goes to the top of the page.
            cursor = QTextCursor(self.browser.document())
            cursor.setPosition(self._section)
            self.browser.setTextCursor(cursor)
            block = self.browser.document().findBlock(self._section)
            top = self.browser.document().documentLayout().blockBoundingRect(block).top()
            self.browser.verticalScrollBar().setValue(int(top))
            self._section = None


def _heading_position(document, text):
    """The position of the first heading whose text is `text`, or None."""
    block = document.begin()
    while block.isValid():
        if block.blockFormat().headingLevel() and block.text().strip() == text:
            return block.position()
        block = block.next()
    return None
