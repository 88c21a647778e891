"""The window as a desktop app: menus, shortcuts, export, settings kept across restarts,
model loading feedback and names, About, documentation."""

import os
import pathlib
import subprocess
import sys

import pytest
from gui_helpers import make_context
from gui_helpers import make_hugging_face_folder
from gui_helpers import stop_context
from PySide6.QtCore import QSettings
from PySide6.QtCore import Qt
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

from kbert_gui.app import create_window
from kbert_gui.services.export_files import ExportAction
from kbert_gui.services.export_files import write_csv
from kbert_gui.services.file_dialogs import FileDialogs
from kbert_gui.window.main_window import MainWindow
from kbert_gui.widgets.table_context_menu import TableContextMenu

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]


def _settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def test_file_dialogs_start_beside_the_last_choice_of_their_kind_after_a_restart(
    tmp_path, monkeypatch
):
    exports = tmp_path / "exports"
    exports.mkdir()
    started_in = []

    def save_dialog(parent, title, start, file_filter):
        started_in.append(start)
        return str(exports / "predictions.csv"), file_filter

    def folder_dialog(parent, title, start):
        started_in.append(start)
        return str(tmp_path / "runs" / "sentiment")

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", folder_dialog)
    dialogs = FileDialogs(_settings(tmp_path))
    home = FileDialogs(_settings(tmp_path)).folder("exports")
    assert dialogs.save_file(None, "Export", "CSV files (*.csv)", "exports", "x.csv") == str(
        exports / "predictions.csv"
    )
    assert started_in == [f"{home}/x.csv"]
    (tmp_path / "runs").mkdir()
    dialogs.existing_folder(None, "Open", "models")

    # A new settings object on the same file: what a restarted app reads.
    restarted = FileDialogs(_settings(tmp_path))
    assert restarted.folder("exports") == str(exports)
    assert restarted.folder("models") == str(tmp_path / "runs")
    restarted.save_file(None, "Export", "CSV files (*.csv)", "exports", "y.csv")
    assert started_in[-1] == str(exports / "y.csv")
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args: ("", ""))
    assert restarted.save_file(None, "Export", "CSV files (*.csv)", "exports") is None


# --- The window ------------------------------------------------------------------------


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
        "&Open model…": "Ctrl+O", "&Recent": "", "&Export": "", "&Quit": "Ctrl+Q",
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
    window.resize(700, 500)
    splitter = window.tab("exporting").splitter
    splitter.setSizes([150, 500])
    qtbot.waitUntil(lambda: window.size().width() == 700)
    sizes = splitter.sizes()
    window.close()
    stop_context(window.context)

    restarted = _window(qtbot, tmp_path)
    restarted.show()
    qtbot.waitExposed(restarted)
    assert (restarted.width(), restarted.height()) == (700, 500)
    assert restarted.tab("exporting").splitter.sizes() == sizes
    stop_context(restarted.context)


def test_about_names_the_versions_backend_and_device(qtbot, tmp_path):
    import keras

    import kbert
    from kbert.platform_support import describe_device

    window = _window(qtbot, tmp_path)
    box = window.show_about()
    assert "still loading" in box.text() and f"kbert {kbert.__version__}" in box.text()
    with qtbot.waitSignal(window.context.environment_ready, timeout=60_000):
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
    folder = make_hugging_face_folder(tmp_path / "hf-bert")
    seen = []
    window.context.models.loading_step.connect(
        lambda step: seen.append((window.loading_indicator.isVisibleTo(window), step))
    )
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


# --- The whole app -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def task_presets(tmp_path_factory):
    """A classifier and a QA model saved from a tiny backbone (heads untrained)."""
    from test_finetune_acceptance import make_tiny_preset
    from test_gui_fine_tuning import SMALL_MODEL

    from kbert.models import BertClassifier
    from kbert.models import BertQuestionAnswerer

    folder = tmp_path_factory.mktemp("gui_window")
    backbone = make_tiny_preset(folder / "preset", **SMALL_MODEL)
    classifier = folder / "runs" / "sentiment" / "model"
    BertClassifier.from_preset(backbone, label_names=["neg", "pos"]).save_to_preset(classifier)
    qa = folder / "runs" / "squad" / "model"
    BertQuestionAnswerer.from_preset(backbone).save_to_preset(qa)
    return {"backbone": backbone, "classifier": classifier, "qa": qa}


def test_opening_a_model_shows_the_tab_that_uses_it(qtbot, tmp_path, task_presets):
    window = create_window(context=make_context(tmp_path, str(task_presets["classifier"])))
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.current_tab_key() == "classify", timeout=60_000)
    assert window.model_label.text() == "runs/sentiment (classifier: neg, pos)"

    def open_and_wait(source, tab_key):
        with qtbot.waitSignal(
            window.context.opener.described,
            timeout=60_000,
            check_params_cb=lambda description: description.source == str(source),
        ):
            window.open_model(source)
        assert window.current_tab_key() == tab_key
        assert window.context.models.recent_sources()[0] == str(source)

    open_and_wait(task_presets["qa"], "qa")
    assert window.model_label.text() == "runs/squad (question answering)"
    open_and_wait("demo", "explorer")
    # A base model opened from the fine-tuning tab stays there, to be fine-tuned...
    window.show_tab("fine-tuning")
    open_and_wait(task_presets["backbone"], "fine-tuning")
    # ... a fine-tuned one goes to its tab.
    open_and_wait(task_presets["classifier"], "classify")
    stop_context(window.context)


def test_every_tab_fits_a_window_800_pixels_wide(qtbot, tmp_path):
    window = create_window(context=make_context(tmp_path))
    qtbot.addWidget(window)
    window.resize(800, 600)
    window.show()
    qtbot.waitExposed(window)
    # A long model name is cut short in the model bar rather than widening the window.
    window.model_label.setText("runs/" + "very-long-run-name-" * 12 + " (classifier: a, b)")
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        assert window.minimumSizeHint().width() <= 800, window.tabs.tabText(index)
        assert window.width() == 800
    stop_context(window.context)


def test_without_a_display_the_app_says_so_and_exits_1():
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    environment["PYTHONPATH"] = os.pathsep.join(sys.path)
    result = subprocess.run(
        [sys.executable, "-m", "kbert_gui"],
        cwd=REPOSITORY,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "no display found" in result.stderr
    assert "xvfb-run -a kbert gui" in result.stderr
    assert "QT_QPA_PLATFORM=offscreen" in result.stderr
    assert "core dumped" not in result.stderr and "Aborted" not in result.stderr


@pytest.mark.skipif(
    os.environ.get("KERAS_BACKEND", "jax") != "jax", reason="JAX's compilation cache"
)
def test_the_app_keeps_jax_programs_on_disk_as_the_command_does(tmp_path):
    environment = {
        key: value for key, value in os.environ.items() if key != "JAX_COMPILATION_CACHE_DIR"
    }
    environment.update(
        KBERT_CACHE=str(tmp_path / "cache"),
        KBERT_GUI_REPORT_STARTUP="1",
        QT_QPA_PLATFORM="offscreen",
        PYTHONPATH=os.pathsep.join(sys.path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "kbert_gui"],
        cwd=REPOSITORY,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith("first prediction after"):
                break
    finally:
        process.kill()
        process.wait()
    assert lines[0].startswith("window shown after") and "(cpu " in lines[0]
    assert lines[-1].startswith("first prediction after")
    assert any((tmp_path / "cache" / "jax-compilation-cache").iterdir())
