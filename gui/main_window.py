"""The app's window: model picker, tabs, status bar."""

import pathlib

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFileDialog
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QMainWindow
from PySide6.QtWidgets import QMenu
from PySide6.QtWidgets import QTabWidget
from PySide6.QtWidgets import QToolBar
from PySide6.QtWidgets import QToolButton

# How long closing the window waits for running work to stop.
CLOSE_TIMEOUT_MS = 4000


class MainWindow(QMainWindow):
    """Tabs over one shared `AppContext`, with the model picker on top.

    The current model is shown in the tool bar; "Open model…" picks a preset or any
    convertible checkpoint folder (also by dropping a folder on the window), and the
    "Recent" menu lists earlier ones and the built-in presets. The status bar shows
    the backend and device once Keras has loaded (in a worker), and the latest
    status line of any tab.

    Args:
        context: the `AppContext`.
        tabs: `(key, widget)` pairs; each widget's `windowTitle()` is its tab label.
        parent: the parent widget.
    """

    def __init__(self, context, tabs=(), parent=None):
        super().__init__(parent)
        self.context = context
        self.setWindowTitle("kbert")
        self.setAcceptDrops(True)
        self.resize(1100, 760)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self._tab_keys = []
        for key, widget in tabs:
            self.tabs.addTab(widget, widget.windowTitle())
            self._tab_keys.append(key)
        self.setCentralWidget(self.tabs)

        self.model_label = QLabel()
        self.model_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_action = QAction("Open model…", self)
        self.open_action.setShortcut(QKeySequence.StandardKey.Open)
        self.open_action.setToolTip(
            "A kbert preset folder, or a Hugging Face, Google or keras-hub checkpoint "
            "folder (converted once). You can also drop a folder on the window."
        )
        self.open_action.triggered.connect(self._choose_folder)
        self.recent_menu = QMenu("Recent", self)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        recent_button = QToolButton()
        recent_button.setText("Recent")
        recent_button.setMenu(self.recent_menu)
        recent_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)

        toolbar = QToolBar("Model")
        toolbar.setMovable(False)
        toolbar.addWidget(QLabel("Model: "))
        toolbar.addWidget(self.model_label)
        toolbar.addSeparator()
        toolbar.addAction(self.open_action)
        toolbar.addWidget(recent_button)
        self.addToolBar(toolbar)

        self.device_label = QLabel("loading Keras…")
        self.statusBar().addPermanentWidget(self.device_label)

        context.status_message.connect(self._show_status)
        context.environment_ready.connect(self.device_label.setText)
        context.tab_requested.connect(self.show_tab)
        context.models.source_changed.connect(self._show_model)
        self._show_model(context.models.source)

    def show_tab(self, key):
        """Brings the tab registered as `key` to the front."""
        if key in self._tab_keys:
            self.tabs.setCurrentIndex(self._tab_keys.index(key))

    def tab(self, key):
        """The widget of the tab registered as `key`."""
        return self.tabs.widget(self._tab_keys.index(key))

    def open_model(self, source):
        """Makes `source` the current model (as the picker does)."""
        self.context.models.set_source(str(source))

    # --- Model picker -----------------------------------------------------------------

    def _show_model(self, source):
        self.model_label.setText(_display_name(source))
        self.model_label.setToolTip(str(source))
        self.statusBar().showMessage(f"Model: {source}", 5000)

    def _choose_folder(self):
        folder = QFileDialog.getExistingDirectory(
            self, "Open a preset or checkpoint folder", str(pathlib.Path.home())
        )
        if folder:
            self.open_model(folder)

    def _fill_recent_menu(self):
        from kbert.presets import BUILTIN_PRESETS

        self.recent_menu.clear()
        recent = self.context.models.recent_sources()
        for source in recent:
            self.recent_menu.addAction(source, lambda source=source: self.open_model(source))
        builtin = [name for name in sorted(BUILTIN_PRESETS) if name not in recent]
        if builtin:
            self.recent_menu.addSection("Built-in")
            for name in builtin:
                self.recent_menu.addAction(name, lambda name=name: self.open_model(name))
        if self.recent_menu.isEmpty():
            self.recent_menu.addAction("(none yet)").setEnabled(False)

    def dragEnterEvent(self, event):
        if _dropped_folder(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event):
        folder = _dropped_folder(event.mimeData())
        if folder is not None:
            self.open_model(folder)
            event.acceptProposedAction()

    # --- Status and shutdown -----------------------------------------------------------

    def _show_status(self, message):
        self.statusBar().showMessage(message, 10000)

    def closeEvent(self, event):
        # Running work is asked to stop (training writes a checkpoint and returns) and
        # waited for, so no thread outlives the window.
        self.statusBar().showMessage("Stopping background work…")
        self.context.stop_all(CLOSE_TIMEOUT_MS)
        event.accept()


def _display_name(source):
    path = pathlib.Path(source)
    return path.name if len(path.parts) > 1 else str(source)


def _dropped_folder(mime_data):
    if not mime_data.hasUrls():
        return None
    for url in mime_data.urls():
        path = pathlib.Path(url.toLocalFile())
        if url.isLocalFile() and path.is_dir():
            return path
    return None
