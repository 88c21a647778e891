"""File ▸ Compare runs…: the Runs view in its own window, tied to the fine-tuning tab."""

import pathlib

from PySide6.QtCore import QObject
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction

from kbert_gui.runs.runs_view import RunsView
from kbert_gui.tab_key import TabKey


class RunsLauncher(QObject):
    """Adds "Compare runs…" to the window's File menu and opens the `RunsView` there.

    The view opens on the folder that holds the fine-tuning tab's run folder (its
    neighbours are the runs to compare); "Use this run's setup" fills the tab's form
    with the run's setup and shows the tab.

    Args:
        window: the `MainWindow` (its `file_menu`, `export_menu`, `show_tab`).
        tuning: the `FineTuningTab`.
    """

    def __init__(self, window, tuning):
        super().__init__(window)
        self.window = window
        self.tuning = tuning
        self.view = None
        self.action = QAction("Compare &runs…", window)
        self.action.setToolTip("Every fine-tuning run under a folder, their curves on one chart.")
        self.action.triggered.connect(self.show_runs)
        window.file_menu.insertAction(window.export_menu.menuAction(), self.action)

    def show_runs(self):
        """Shows the Runs view (one per window), on the runs beside the tab's run folder."""
        if self.view is None:
            self.view = RunsView(self.window.context, self.window)
            self.view.setWindowFlag(Qt.WindowType.Window, True)
            self.view.resize(1000, 640)
            self.view.setup_chosen.connect(self._use_setup)
        folder = self.tuning.output_edit.text().strip()
        parent = pathlib.Path(folder).expanduser().parent if folder else None
        if parent is not None and parent.is_dir() and not self.view.folder_edit.text():
            self.view.load(parent)
        self.view.show()
        self.view.raise_()
        return self.view

    def _use_setup(self, record):
        self.tuning.setup_controller.restore(record)
        self.window.show_tab(TabKey.FINE_TUNING)
