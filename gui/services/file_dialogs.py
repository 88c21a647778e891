"""File dialogs that start where the user last was, and remember it across restarts."""

import pathlib

from PySide6.QtWidgets import QFileDialog

FOLDERS_GROUP = "folders"


class FileDialogs:
    """Qt's file dialogs, each opening in the folder last used for the same kind of file.

    A *kind* names what the dialog picks ("models", "exports", "data", ...); the folder
    holding the last file or folder chosen for it is kept in `settings` under
    `folders/<kind>`, so the next dialog of that kind (also after a restart) starts
    there, beside the last choice; before the first choice, in the home folder. Each
    method returns the chosen path as a string, or None when the user cancelled.

    Args:
        settings: the app's `QSettings`.
    """

    def __init__(self, settings):
        self._settings = settings

    def folder(self, kind):
        """The folder a dialog of `kind` starts in."""
        value = self._settings.value(f"{FOLDERS_GROUP}/{kind}")
        if value and pathlib.Path(str(value)).is_dir():
            return str(value)
        return str(pathlib.Path.home())

    def remember(self, kind, path):
        """Makes the folder holding `path` (a file or a folder) the start of `kind`."""
        folder = pathlib.Path(path).absolute().parent
        self._settings.setValue(f"{FOLDERS_GROUP}/{kind}", str(folder))

    def existing_folder(self, parent, title, kind):
        """Asks for an existing folder."""
        chosen = QFileDialog.getExistingDirectory(parent, title, self.folder(kind))
        return self._chosen(kind, chosen)

    def open_file(self, parent, title, file_filter, kind):
        """Asks for an existing file matching `file_filter` ("Text files (*.txt)")."""
        chosen, _ = QFileDialog.getOpenFileName(parent, title, self.folder(kind), file_filter)
        return self._chosen(kind, chosen)

    def save_file(self, parent, title, file_filter, kind, suggested_name=""):
        """Asks for a file name to write, proposing `suggested_name` in the start folder."""
        start = str(pathlib.Path(self.folder(kind)) / suggested_name)
        chosen, _ = QFileDialog.getSaveFileName(parent, title, start, file_filter)
        return self._chosen(kind, chosen)

    def _chosen(self, kind, chosen):
        if not chosen:
            return None
        self.remember(kind, chosen)
        return chosen
