"""Help ▸ Documentation (F1): the README, rendered in the app."""

from PySide6.QtWidgets import QDialog
from PySide6.QtWidgets import QDialogButtonBox
from PySide6.QtWidgets import QTextBrowser
from PySide6.QtWidgets import QVBoxLayout


class DocumentationDialog(QDialog):
    """The project's README as a page: headings, tables, code and its pictures.

    Links to web pages open in the browser; the README's relative pictures are found
    beside it (in a source checkout).

    Args:
        markdown: the README's text.
        folder: the folder its relative links point into, or None.
        parent: the parent widget.
    """

    def __init__(self, markdown, folder=None, parent=None):
        super().__init__(parent)
        self.setWindowTitle("kbert documentation")
        self.browser = QTextBrowser()
        self.browser.setObjectName("documentationBrowser")
        self.browser.setOpenExternalLinks(True)
        if folder is not None:
            self.browser.setSearchPaths([str(folder)])
        self.browser.setMarkdown(markdown)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser, 1)
        layout.addWidget(buttons)
        self.resize(900, 700)
