"""The app's window: the menus, the model bar, the tabs, the status bar."""

from PySide6.QtCore import Qt
from PySide6.QtCore import Slot
from PySide6.QtGui import QAction
from PySide6.QtGui import QActionGroup
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QMainWindow
from PySide6.QtWidgets import QMenu
from PySide6.QtWidgets import QMessageBox
from PySide6.QtWidgets import QTabWidget
from PySide6.QtWidgets import QToolBar
from PySide6.QtWidgets import QToolButton
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.services.model_description import short_name
from kbert_gui.tab_key import TabKey
from kbert_gui.widgets.elided_label import ElidedLabel
from kbert_gui.widgets.error_banner import ErrorBanner
from kbert_gui.window.documentation_dialog import DocumentationDialog
from kbert_gui.window.edit_actions import EditActions
from kbert_gui.evaluation.evaluation_launcher import EvaluationLauncher
from kbert_gui.window.export_menu import export_to_chosen_file
from kbert_gui.window.export_menu import fill_export_menu
from kbert_gui.window.keyboard_shortcuts_dialog import KeyboardShortcutsDialog
from kbert_gui.window.model_loading_indicator import ModelLoadingIndicator
from kbert_gui.window.model_source_problem import dropped_model
from kbert_gui.window.open_model_dialog import OpenModelDialog
from kbert_gui.window.window_format import about_html
from kbert_gui.window.window_format import readme
from kbert_gui.window.window_settings import WindowSettings

# How long closing the window waits for running work to stop.
CLOSE_TIMEOUT_MS = 4000
DEFAULT_SIZE = (1100, 760)
# The smallest window every tab is laid out for: no widget overlaps another or is
# squeezed below its minimum (tests/gui/test_app.py checks each tab at this size).
MINIMUM_SIZE = (760, 560)


class MainWindow(QMainWindow):
    """Tabs over one shared `AppContext`, with the menus and the model bar on top.

    The model bar names the current model after its run and task ("runs/sentiment
    (classifier: neg, pos)"), shows a moving bar with the current step while a model
    is opened, converted or loaded, and offers "Open model…" (an `OpenModelDialog`:
    any name, folder or file) and "Recent". A model the user opens (those, File ▸ Open
    model file (.keras)…, a folder or `.keras` file dropped on the window) is checked
    first by the context's `ModelOpener`: one that is no model leaves the current model
    in place and says what a model folder holds. Once a new model is
    described, the window shows the tab that uses it (a classifier or tagger "Classify
    & tag", a QA model "Question answering", a base model "Masked words"; a base model
    opened from the fine-tuning tab leaves it there, to be fine-tuned), unless a tab
    asked for another one (`AppContext.open_model`, "Open in …"): the request is kept.

    Menus: File (Open model, Open model file, Recent, Evaluate… (the evaluation browser),
    Export: the current tab's `export_actions()`, Quit), Edit (acting on the focused
    widget), View (the tabs), Help (keyboard shortcuts, documentation, About). The
    geometry, tabs' splitters and file dialogs' folders are kept in the settings.

    Args:
        context: the `AppContext`.
        tabs: `(key, widget)` pairs, the key a `TabKey` (any str in tests); each
            widget's `windowTitle()` is its tab label.
            A widget with `export_actions()` fills File ▸ Export while it is shown.
        parent: the parent widget.
    """

    def __init__(self, context, tabs=(), parent=None):
        super().__init__(parent)
        self.context = context
        self.setWindowTitle("kbert")
        self.setAcceptDrops(True)
        self._tabs = list(tabs)
        self._tab_keys = [key for key, _ in self._tabs]
        self._switch_pending = True
        self.about_box = None

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        for _key, widget in self._tabs:
            self.tabs.addTab(widget, widget.windowTitle())
        self.error_banner = ErrorBanner()
        central = QWidget()
        central_layout = QVBoxLayout(central)
        central_layout.setContentsMargins(0, 0, 0, 0)
        central_layout.setSpacing(0)
        central_layout.addWidget(self.error_banner)
        central_layout.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

        self._build_actions()
        self._build_model_bar()
        self._build_menus()
        self.device_label = QLabel("loading Keras…")
        self.statusBar().addPermanentWidget(self.device_label)

        context.status_message.connect(self._show_status)
        context.environment_ready.connect(self.device_label.setText)
        context.environment_ready.connect(self._update_about)
        context.tab_requested.connect(self._tab_requested)
        context.models.source_changed.connect(self._source_changed)
        context.opener.described.connect(self._model_described)
        context.opener.failed.connect(self._model_failed)
        self.tabs.currentChanged.connect(self._tab_changed)

        self.setMinimumSize(*MINIMUM_SIZE)
        self.resize(*DEFAULT_SIZE)
        self.settings = WindowSettings(context.settings)
        self.settings.restore(self, self._tabs)
        self._show_model_name(short_name(context.models.source), context.models.source)
        self._tab_changed(self.tabs.currentIndex())
        context.opener.describe_current()

    # --- Tabs -------------------------------------------------------------------------

    def show_tab(self, key):
        """Brings the tab registered as `key` to the front."""
        if key in self._tab_keys:
            self.tabs.setCurrentIndex(self._tab_keys.index(key))

    @Slot(str)
    def _tab_requested(self, key):
        # A tab asked for this one: the model's description must not switch elsewhere.
        self._switch_pending = False
        self.show_tab(key)

    def tab(self, key):
        """The widget of the tab registered as `key`."""
        return self.tabs.widget(self._tab_keys.index(key))

    def current_tab_key(self):
        return self._tab_keys[self.tabs.currentIndex()] if self._tab_keys else None

    @Slot(int)
    def _tab_changed(self, index):
        if 0 <= index < len(self.view_actions):
            self.view_actions[index].setChecked(True)

    # --- Actions and menus ----------------------------------------------------------

    def _build_actions(self):
        self.open_action = QAction("&Open model…", self)
        self.open_action.setShortcut(QKeySequence("Ctrl+O"))
        self.open_action.setToolTip(
            "A model by name (built-in, published, hf://), folder or .keras file, or a "
            "recent one. You can also drop a folder or file on the window."
        )
        self.open_action.triggered.connect(self.choose_model)
        self.open_file_action = QAction("Open model &file (.keras)…", self)
        self.open_file_action.setShortcut(QKeySequence("Ctrl+Shift+O"))
        self.open_file_action.setToolTip(
            "A .keras file written by model.save (checked, converted once). You can "
            "also drop it on the window."
        )
        self.open_file_action.triggered.connect(self._choose_model_file)
        self.quit_action = QAction("&Quit", self)
        self.quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        self.quit_action.triggered.connect(self.close)
        self.edit_actions = EditActions(self)
        self.view_actions = []
        group = QActionGroup(self)
        for index, (_key, widget) in enumerate(self._tabs):
            action = QAction(widget.windowTitle(), self, checkable=True)
            if index < 9:
                action.setShortcut(QKeySequence(f"Ctrl+{index + 1}"))
            action.triggered.connect(
                lambda checked=False, index=index: self.tabs.setCurrentIndex(index)
            )
            group.addAction(action)
            self.view_actions.append(action)
        self.shortcuts_action = QAction("&Keyboard shortcuts", self)
        self.shortcuts_action.triggered.connect(self.show_keyboard_shortcuts)
        self.documentation_action = QAction("&Documentation", self)
        self.documentation_action.setShortcut(QKeySequence("F1"))
        self.documentation_action.triggered.connect(self.show_documentation)
        self.about_action = QAction("&About kbert", self)
        self.about_action.triggered.connect(self.show_about)

    def _build_menus(self):
        menu_bar = self.menuBar()
        self.file_menu = menu_bar.addMenu("&File")
        self.file_menu.addAction(self.open_action)
        self.file_menu.addAction(self.open_file_action)
        self.file_menu.addMenu(self.recent_menu)
        self.evaluation = EvaluationLauncher(self.context, self)
        self.evaluation.failed.connect(self._evaluation_failed)
        self.evaluate_action = self.file_menu.addAction("E&valuate…", self.evaluation.ask)
        self.export_menu = self.file_menu.addMenu("&Export")
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.quit_action)
        self.file_menu.aboutToShow.connect(self.update_export_menu)

        self.edit_menu = menu_bar.addMenu("&Edit")
        for index, action in enumerate(self.edit_actions.actions):
            if index in (2, 5):  # undo/redo | cut/copy/paste | select all
                self.edit_menu.addSeparator()
            self.edit_menu.addAction(action)
        self.edit_menu.aboutToShow.connect(self.edit_actions.update_enabled)
        self.edit_menu.aboutToHide.connect(self.edit_actions.enable_all)

        self.view_menu = menu_bar.addMenu("&View")
        self.view_menu.addActions(self.view_actions)

        self.help_menu = menu_bar.addMenu("&Help")
        self.help_menu.addAction(self.shortcuts_action)
        self.help_menu.addAction(self.documentation_action)
        self.help_menu.addSeparator()
        self.help_menu.addAction(self.about_action)
        self.menus = [self.file_menu, self.edit_menu, self.view_menu, self.help_menu]

    def _build_model_bar(self):
        self.recent_menu = QMenu("&Recent", self)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        recent_button = QToolButton()
        recent_button.setText("Recent")
        recent_button.setMenu(self.recent_menu)
        recent_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.model_label = ElidedLabel(minimum_characters=16)
        self.model_label.setObjectName("modelName")
        self.loading_indicator = ModelLoadingIndicator(self.context.models)
        # In a layout: a tool bar's own widget shown by show() (not its action) lands at 0, 0.
        model_area = QWidget()
        model_layout = QHBoxLayout(model_area)
        model_layout.setContentsMargins(0, 0, 0, 0)
        model_layout.setSpacing(0)
        model_layout.addWidget(QLabel(" Model: "))
        model_layout.addWidget(self.model_label, 1)
        model_layout.addWidget(self.loading_indicator)
        toolbar = QToolBar("Model")
        toolbar.setObjectName("modelBar")
        toolbar.setMovable(False)
        toolbar.addWidget(model_area)
        toolbar.addSeparator()
        toolbar.addAction(self.open_action)
        toolbar.addWidget(recent_button)
        self.addToolBar(toolbar)

    @Slot()
    def update_export_menu(self):
        """Fills File ▸ Export with the current tab's exports (disabled when none applies)."""
        fill_export_menu(self.export_menu, self.tabs.currentWidget(), self.export)

    def export(self, export):
        """Asks where to save `export` (an `ExportAction`), starting in the last folder."""
        return export_to_chosen_file(self, export)

    # --- Help -------------------------------------------------------------------------

    def about_text(self):
        import kbert

        return about_html(kbert.__version__, self.context.environment)

    @Slot()
    def show_about(self):
        if self.about_box is None:
            self.about_box = QMessageBox(
                QMessageBox.Icon.Information,
                "About kbert",
                "",
                QMessageBox.StandardButton.Close,
                self,
            )
            self.about_box.setObjectName("aboutBox")
        self._update_about()
        self.about_box.open()
        return self.about_box

    @Slot()
    def _update_about(self):
        # Keras may still be loading when the box opens: it fills in when it has.
        if self.about_box is not None:
            self.about_box.setText(self.about_text())

    @Slot()
    def show_keyboard_shortcuts(self):
        tabs = [(widget.windowTitle(), widget) for _key, widget in self._tabs]
        dialog = KeyboardShortcutsDialog(self.menus, tabs, self)
        dialog.open()
        return dialog

    @Slot()
    def show_documentation(self):
        markdown, folder = readme()
        dialog = DocumentationDialog(markdown, folder, self)
        dialog.open()
        return dialog

    # --- The model --------------------------------------------------------------------

    def open_model(self, source):
        """Opens `source` as the picker does: checked first, kept only if it is a model."""
        self.error_banner.clear_error()
        self._show_status(f"Opening {source}…")
        self.context.opener.open(str(source))

    @Slot(str)
    def _source_changed(self, source):
        # A model opened: an earlier failure to open one is no longer news.
        self.error_banner.clear_error()
        self._switch_pending = True
        self._show_model_name(short_name(source), source)
        self._show_status(f"Model: {source}")

    @Slot(object)
    def _model_described(self, description):
        self.error_banner.clear_error()
        self._show_model_name(description.title, description.details)
        if self._switch_pending:
            self._switch_pending = False
            if description.is_fine_tuned or self.current_tab_key() != TabKey.FINE_TUNING:
                self.show_tab(description.tab_key)

    @Slot(str, str)
    def _model_failed(self, source, message):
        current = self.context.models.source
        if source == current:
            text = f"Cannot open the model {source}: {message}"
        else:
            text = f"Cannot open {source}: {message} The model is still {short_name(current)}."
        self.error_banner.show_error(text)
        self._show_status(f"Could not open {source}.")

    @Slot(str)
    def _evaluation_failed(self, message):
        # In the banner, whole and until dismissed (the status line clipped it and let go).
        self.error_banner.show_error(f"Evaluation failed: {message}")

    def _show_model_name(self, name, tooltip):
        self.model_label.setText(name)
        self.model_label.setToolTip(tooltip)

    @Slot()
    def choose_model(self):
        """Opens the `OpenModelDialog` (window-modal); returns it."""
        models = self.context.models
        dialog = OpenModelDialog(self.context.file_dialogs, models.recent_sources(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.chosen.connect(self.open_model)
        dialog.open()
        return dialog

    @Slot()
    def _choose_model_file(self):
        path = self.context.file_dialogs.open_file(
            self, "Open a .keras model file", "Keras models (*.keras)", "models"
        )
        if path:
            self.open_model(path)

    @Slot()
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

    def dragEnterEvent(self, event):
        if dropped_model(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event):
        model = dropped_model(event.mimeData())
        if model is not None:
            self.open_model(model)
            event.acceptProposedAction()

    # --- Status and shutdown -----------------------------------------------------------

    @Slot(str)
    def _show_status(self, message):
        self.statusBar().showMessage(message, 10000)

    def closeEvent(self, event):
        # A tab with running work (training) asks first, as Esc does; "No" keeps the
        # window open. Ctrl+Q and File > Quit close the window, so they ask too.
        for _key, widget in self._tabs:
            if hasattr(widget, "may_close") and not widget.may_close():
                event.ignore()
                return
        self.settings.save(self, self._tabs)
        # Running work is asked to stop (training writes a checkpoint and returns) and
        # waited for, so no thread outlives the window.
        self.statusBar().showMessage("Stopping background work…")
        self.context.stop_all(CLOSE_TIMEOUT_MS)
        event.accept()

