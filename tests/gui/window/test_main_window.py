"""The window as a desktop app: menus, shortcuts, export, settings kept across restarts,
model loading feedback and names, dropped folders, About, documentation, shutdown."""

import shutil
import threading
import time

from gui_helpers import make_context
from gui_helpers import make_hugging_face_folder
from gui_helpers import stop_context
from PySide6.QtCore import QMimeData
from PySide6.QtCore import QPointF
from PySide6.QtCore import Qt
from PySide6.QtCore import QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtGui import QGuiApplication
from PySide6.QtGui import QKeySequence
from PySide6.QtGui import QShortcut
from PySide6.QtGui import QStandardItem
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView
from PySide6.QtWidgets import QFileDialog
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QSplitter
from PySide6.QtWidgets import QTableView
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.services.export_files import ExportAction
from kbert_gui.services.export_files import write_csv
from kbert_gui.widgets.table_context_menu import TableContextMenu
from kbert_gui.window.main_window import MainWindow


class _ExportingTab(QWidget):
    """A tab with a line edit, a table, a splitter and one export."""

    def __init__(self, title="Exporting"):
        super().__init__()
        self.setWindowTitle(title)
        self.line_edit = QLineEdit()
        self.table = QTableView()
        model = QStandardItemModel(0, 2, self.table)
        model.setHorizontalHeaderLabels(["Label", "Probability"])
        for row in (("pos", "0.9"), ("neg", "0.1")):
            model.appendRow([QStandardItem(cell) for cell in row])
        self.table.setModel(model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        TableContextMenu(self.table)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.line_edit)
        self.splitter.addWidget(self.table)
        self.shortcut = QShortcut(QKeySequence("Ctrl+M"), self)
        self.shortcut.setWhatsThis("Insert a mask")
        self.has_result = False
        layout = QVBoxLayout(self)
        layout.addWidget(self.splitter)

    def export_actions(self):
        return [
            ExportAction(
                "Predictions as CSV…",
                "CSV files (*.csv)",
                ".csv",
                lambda path: write_csv(path, ["label"], [{"label": "pos"}]),
                lambda: self.has_result,
            )
        ]


def _window(qtbot, tmp_path, source="demo"):
    context = make_context(tmp_path, source)
    tabs = [("exporting", _ExportingTab()), ("plain", QLabel("plain"))]
    tabs[1][1].setWindowTitle("Plain")
    window = MainWindow(context, tabs)
    qtbot.addWidget(window)
    return window


def _shortcuts(menu):
    return {
        action.text(): action.shortcut().toString()
        for action in menu.actions()
        if not action.isSeparator()
    }


def test_the_menus_offer_the_usual_actions_with_their_shortcuts(qtbot, tmp_path):
    window = _window(qtbot, tmp_path)
    titles = [action.text() for action in window.menuBar().actions()]
    assert titles == ["&File", "&Edit", "&View", "&Help"]
    assert _shortcuts(window.file_menu) == {
        "&Open model…": "Ctrl+O", "Open model &file (.keras)…": "Ctrl+Shift+O",
        "&Recent": "", "E&valuate…": "", "&Export": "", "&Quit": "Ctrl+Q",
    }
    # The platform's own keys (Redo is Ctrl+Shift+Z on some desktops, Ctrl+Y on others).
    redo = QKeySequence.keyBindings(QKeySequence.StandardKey.Redo)[0].toString()
    assert _shortcuts(window.edit_menu) == {
        "&Undo": "Ctrl+Z", "&Redo": redo, "Cu&t": "Ctrl+X", "&Copy": "Ctrl+C",
        "&Paste": "Ctrl+V", "Select &all": "Ctrl+A",
    }
    assert _shortcuts(window.view_menu) == {"Exporting": "Ctrl+1", "Plain": "Ctrl+2"}
    assert _shortcuts(window.help_menu) == {
        "&Keyboard shortcuts": "", "&Documentation": "F1", "&About kbert": "",
    }
    window.view_actions[1].trigger()
    assert window.current_tab_key() == "plain" and window.view_actions[1].isChecked()
    window.show_tab("exporting")
    assert window.view_actions[0].isChecked()

    dialog = window.show_keyboard_shortcuts()
    rows = {
        tuple(dialog.model.item(row, column).text() for column in range(3))
        for row in range(dialog.model.rowCount())
    }
    assert ("File", "Open model…", "Ctrl+O") in rows and ("Help", "Documentation", "F1") in rows
    assert ("Exporting", "Insert a mask", "Ctrl+M") in rows
    dialog.close()

    window.show()
    window.quit_action.trigger()
    assert not window.isVisible()
    stop_context(window.context)


def test_edit_actions_act_on_the_focused_widget(qtbot, tmp_path):
    window = _window(qtbot, tmp_path)
    window.show()
    qtbot.waitExposed(window)
    tab = window.tab("exporting")
    edit = window.edit_actions
    tab.line_edit.setFocus()
    qtbot.keyClicks(tab.line_edit, "the cat")
    qtbot.waitUntil(lambda: window.focusWidget() is tab.line_edit)
    # As the menu opens, what applies is enabled; as it closes, all again (for the keys).
    edit.update_enabled()
    assert edit.undo.isEnabled() and not edit.redo.isEnabled() and not edit.cut.isEnabled()
    edit.enable_all()
    edit.select_all.trigger()
    edit.copy.trigger()
    assert QGuiApplication.clipboard().text() == "the cat"
    edit.undo.trigger()
    assert tab.line_edit.text() == ""
    edit.update_enabled()
    assert edit.redo.isEnabled() and not edit.undo.isEnabled()
    edit.enable_all()
    edit.redo.trigger()
    assert tab.line_edit.text() == "the cat"
    edit.enable_all()

    # In a table, Copy copies the selected rows.
    tab.table.setFocus()
    qtbot.waitUntil(lambda: window.focusWidget() is tab.table)
    tab.table.selectRow(1)
    edit.update_enabled()
    assert edit.copy.isEnabled() and not edit.paste.isEnabled()
    edit.enable_all()
    edit.copy.trigger()
    assert QGuiApplication.clipboard().text() == "neg\t0.1"
    stop_context(window.context)


def test_export_lists_the_tabs_exports_and_starts_in_the_last_folder(qtbot, tmp_path, monkeypatch):
    window = _window(qtbot, tmp_path)
    tab = window.tab("exporting")
    window.update_export_menu()
    assert not window.export_menu.isEnabled()  # nothing to save yet
    assert [action.isEnabled() for action in window.export_menu.actions()] == [False]
    tab.has_result = True
    window.update_export_menu()
    assert window.export_menu.isEnabled()
    (action,) = window.export_menu.actions()
    assert action.text() == "Predictions as CSV…" and action.isEnabled()
    window.show_tab("plain")
    window.update_export_menu()
    assert not window.export_menu.isEnabled() and window.export_menu.actions() == []

    folder = tmp_path / "exports"
    folder.mkdir()
    started_in = []

    def save_dialog(parent, title, start, file_filter):
        started_in.append(start)
        return str(folder / "mine"), file_filter

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    window.show_tab("exporting")
    window.update_export_menu()
    window.export_menu.actions()[0].trigger()
    assert (folder / "mine.csv").read_text(encoding="utf-8") == "label\npos\n"
    assert started_in[0].endswith("/predictions.csv")
    window.export_menu.actions()[0].trigger()
    assert started_in[1] == str(folder / "predictions.csv")
    assert window.statusBar().currentMessage() == f"Saved {folder / 'mine.csv'}"
    stop_context(window.context)


def test_geometry_and_splitters_are_restored_after_a_restart(qtbot, tmp_path):
    window = _window(qtbot, tmp_path)
    window.show()
    qtbot.waitExposed(window)
    # Inside the offscreen platform's 800 x 600 screen, which restoring clamps to.
    window.resize(780, 580)
    splitter = window.tab("exporting").splitter
    splitter.setSizes([150, 500])
    qtbot.waitUntil(lambda: window.size().width() == 780)
    sizes = splitter.sizes()
    window.close()
    stop_context(window.context)

    restarted = _window(qtbot, tmp_path)
    restarted.show()
    qtbot.waitExposed(restarted)
    assert (restarted.width(), restarted.height()) == (780, 580)
    assert restarted.tab("exporting").splitter.sizes() == sizes
    stop_context(restarted.context)


def test_about_names_the_versions_backend_and_device(qtbot, tmp_path):
    import keras

    import kbert
    from kbert.platform_support import describe_device

    window = _window(qtbot, tmp_path)
    box = window.show_about()
    assert "still loading" in box.text() and f"kbert {kbert.__version__}" in box.text()
    # Keras' start queues behind the window's other work on the inference pool: on CI's
    # two loaded cores it once took over 60 s.
    with qtbot.waitSignal(window.context.environment_ready, timeout=180_000):
        window.context.load_environment()
    text = box.text()  # filled in once Keras has loaded
    assert f"Keras {keras.version()}" in text
    assert f"Backend: {keras.config.backend()}" in text
    assert f"Device: {describe_device()}" in text
    box.close()
    stop_context(window.context)


def test_documentation_shows_the_readme(qtbot, tmp_path):
    window = _window(qtbot, tmp_path)
    dialog = window.show_documentation()
    text = dialog.browser.toPlainText()
    assert text.startswith("kbert") and "The desktop app" in text
    dialog.close()
    stop_context(window.context)


def test_the_window_shows_the_conversion_while_a_model_opens(qtbot, tmp_path):
    window = _window(qtbot, tmp_path)
    window.show()
    qtbot.waitExposed(window)
    folder = make_hugging_face_folder(tmp_path / "hf-bert")
    seen = []
    name = window.model_label

    def indicator_shown(step):
        # Shown, in the model bar beside the model's name (not over it).
        indicator = window.loading_indicator
        beside = indicator.mapTo(window, indicator.rect().topLeft()).x() >= name.mapTo(
            window, name.rect().topRight()
        ).x()
        seen.append((indicator.isVisible() and beside, step))

    window.context.models.loading_step.connect(indicator_shown)
    with qtbot.waitSignal(
        window.context.opener.described,
        timeout=60_000,
        check_params_cb=lambda description: description.source == str(folder),
    ):
        window.open_model(folder)
    assert any(visible and "converting it once" in step for visible, step in seen)
    assert window.loading_indicator.isHidden()
    assert window.model_label.text() == "hf-bert (masked LM)"
    assert "kbert preset:" in window.model_label.toolTip()
    stop_context(window.context)


# --- Models and tabs --------------------------------------------------------------------


def _two_tab_window(qtbot, tmp_path):
    context = make_context(tmp_path)
    first, second = QLabel("first"), QLabel("second")
    first.setWindowTitle("First")
    second.setWindowTitle("Second")
    window = MainWindow(context, [("first", first), ("second", second)])
    qtbot.addWidget(window)
    return window


def _drop(window, folder):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(folder))])
    drop = QDropEvent(
        QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(drop)


def test_window_opens_a_dropped_model_folder_and_switches_tabs_on_request(qtbot, tmp_path):
    from kbert.presets import BUILTIN_PRESETS

    window = _two_tab_window(qtbot, tmp_path)
    assert window.model_label.text() == "demo"
    assert [window.tabs.tabText(index) for index in range(2)] == ["First", "Second"]

    folder = tmp_path / "my-model"
    shutil.copytree(BUILTIN_PRESETS["demo"], folder)
    with qtbot.waitSignal(window.context.models.source_changed, timeout=30000):
        _drop(window, folder)
    assert window.context.models.source == str(folder)
    assert window.context.models.recent_sources()[0] == str(folder)
    qtbot.waitUntil(lambda: window.model_label.text() == "my-model (pretrained)", timeout=30000)

    window.context.open_model("demo", "second")
    assert window.tabs.currentWidget() is window.tab("second")
    qtbot.waitUntil(lambda: window.model_label.text() == "demo (pretrained)", timeout=30000)
    stop_context(window.context)


def test_opening_an_empty_folder_says_what_a_model_is_and_keeps_the_model(qtbot, tmp_path):
    window = _two_tab_window(qtbot, tmp_path)
    recent = window.context.models.recent_sources()
    empty = tmp_path / "empty"
    empty.mkdir()
    with qtbot.waitSignal(window.context.opener.failed, timeout=60000):
        _drop(window, empty)
    message = window.error_banner.message
    assert message.startswith(f"Cannot open {empty}: '{empty}' is not a model folder: a model ")
    assert "kbert preset" in message and "The folder holds: nothing" in message
    assert "max() arg" not in message
    assert message.endswith("The model is still demo.")
    assert window.context.models.source == "demo"
    assert window.model_label.text() in ("demo", "demo (pretrained)")
    assert window.context.models.recent_sources() == recent
    stop_context(window.context)


def test_a_keras_file_chosen_in_the_file_dialog_or_dropped_becomes_the_model(
    qtbot, tmp_path, monkeypatch
):
    from inference_helpers import VOCABULARY
    from inference_helpers import make_tokenizer
    from model_helpers import TINY

    from kbert.models import BertBackbone
    from kbert.models import BertClassifier

    backbone = BertBackbone(**dict(TINY, vocabulary_size=len(VOCABULARY), max_positions=32))
    model = BertClassifier(backbone, label_names=["neg", "pos"])
    model.tokenizer = make_tokenizer(tmp_path)
    path = tmp_path / "sentiment.keras"
    model.save(path)
    window = _two_tab_window(qtbot, tmp_path)
    asked = []

    def choose(parent, title, folder, file_filter):
        asked.append(file_filter)
        return str(path), file_filter

    monkeypatch.setattr(QFileDialog, "getOpenFileName", choose)
    with qtbot.waitSignal(window.context.models.source_changed, timeout=60000):
        window.open_file_action.trigger()
    assert asked == ["Keras models (*.keras)"]
    assert window.context.models.source == str(path)
    qtbot.waitUntil(
        lambda: window.model_label.text() == "sentiment.keras (classifier: neg, pos)",
        timeout=30000,
    )
    # Dropped on the window, a .keras file opens too.
    with qtbot.waitSignal(window.context.models.source_changed, timeout=30000):
        window.context.open_model("demo", "second")
    with qtbot.waitSignal(window.context.models.source_changed, timeout=60000):
        _drop(window, path)
    assert window.context.models.source == str(path)
    stop_context(window.context)


def test_a_failed_open_can_be_dismissed_and_clears_once_a_model_opens(qtbot, tmp_path):
    window = _two_tab_window(qtbot, tmp_path)
    window.show()
    empty = tmp_path / "empty"
    empty.mkdir()
    for _attempt in range(2):
        with qtbot.waitSignal(window.context.opener.failed, timeout=60000):
            window.open_model(empty)
        assert window.error_banner.isVisible() and window.error_banner.close_button.isVisible()
        # The status bar no longer says the folder is being opened.
        assert not window.statusBar().currentMessage().startswith("Opening")
        assert window.statusBar().currentMessage() == f"Could not open {empty}."
    qtbot.mouseClick(window.error_banner.close_button, Qt.MouseButton.LeftButton)
    assert window.error_banner.isHidden() and window.error_banner.message == ""

    with qtbot.waitSignal(window.context.opener.failed, timeout=60000):
        window.open_model(empty)
    assert window.error_banner.message
    with qtbot.waitSignal(window.context.opener.described, timeout=60000):
        window.open_model("demo")
    assert window.error_banner.isHidden()
    stop_context(window.context)


def test_window_shows_backend_and_device_once_keras_loads(qtbot, tmp_path):
    import keras

    window = _two_tab_window(qtbot, tmp_path)
    assert window.device_label.text() == "loading Keras…"
    # As in the About test: on CI's two loaded cores this once took over 30 s.
    with qtbot.waitSignal(window.context.environment_ready, timeout=180_000):
        window.context.load_environment()
    backend = {"jax": "JAX", "tensorflow": "TensorFlow", "torch": "PyTorch"}[keras.config.backend()]
    assert window.device_label.text().startswith(f"{backend} on ")
    stop_context(window.context)


def test_closing_the_window_stops_running_work_within_five_seconds(qtbot, tmp_path):
    window = _two_tab_window(qtbot, tmp_path)
    window.show()
    started = threading.Event()

    def train_until_cancelled(worker):
        started.set()
        while not worker.is_cancelled():
            time.sleep(0.05)

    worker = window.context.run_training(train_until_cancelled)
    assert started.wait(5)
    begin = time.perf_counter()
    window.close()
    assert time.perf_counter() - begin < 5
    assert worker.is_done()
    assert window.context.training_pool.active_workers == []
