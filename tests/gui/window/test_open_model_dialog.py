"""File ▸ Open model… (Ctrl+O): one dialog that takes a name, a folder or a file, and
lists the recent and built-in models; what names no model gets one line in it."""

import shutil

import pytest
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox
from PySide6.QtWidgets import QFileDialog

from gui_helpers import one_tab_window
from gui_helpers import stop_context
from kbert.presets import BUILTIN_PRESETS
from kbert_gui.window.model_source_problem import NO_NAME
from kbert_gui.window.model_source_problem import model_source_problem
from kbert_gui.window.open_model_dialog import OpenModelDialog

TIMEOUT_MS = 60_000


@pytest.fixture
def window(qtbot, tmp_path):
    window = one_tab_window(qtbot, tmp_path)
    window.show()
    qtbot.waitExposed(window)
    yield window
    stop_context(window.context)


def _open_dialog(qtbot, window):
    """Ctrl+O in the window; returns the dialog it shows."""
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    dialogs = [dialog for dialog in window.findChildren(OpenModelDialog) if dialog.isVisible()]
    assert len(dialogs) == 1
    return dialogs[0]


def _closed(dialog):
    # The dialog deletes itself once closed.
    return not shiboken6.isValid(dialog) or not dialog.isVisible()


def _click_open(qtbot, dialog):
    button = dialog.buttons.button(QDialogButtonBox.StandardButton.Open)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_ctrl_o_opens_a_built_in_model_by_name(qtbot, window):
    dialog = _open_dialog(qtbot, window)
    dialog.name_edit.setText("demo-tiny")
    with qtbot.waitSignal(window.context.models.source_changed, timeout=TIMEOUT_MS):
        _click_open(qtbot, dialog)
    assert window.context.models.source == "demo-tiny"
    assert _closed(dialog)


def test_a_name_that_is_no_model_gets_one_line_and_the_dialog_stays(qtbot, window):
    dialog = _open_dialog(qtbot, window)
    opened = []
    window.context.opener.open = opened.append
    # Set, not typed: the completer's popup cannot grab the offscreen keyboard.
    dialog.name_edit.setText("bert-base-uncase")
    _click_open(qtbot, dialog)
    assert dialog.isVisible() and opened == []
    assert dialog.problem == (
        "No model is called bert-base-uncase: it is no built-in or published name, nor a "
        "folder here. Did you mean bert-base-uncased or bert-base-cased?"
    )
    assert "\n" not in dialog.problem
    # Typing again clears the line; an empty field says what to type.
    dialog.name_edit.clear()
    qtbot.keyClicks(dialog.name_edit, " ")
    assert dialog.problem == ""
    _click_open(qtbot, dialog)
    assert dialog.problem == NO_NAME and opened == []
    # A published name passes on to the window's opener (which downloads it there).
    dialog.name_edit.setText("bert-base-uncased")
    _click_open(qtbot, dialog)
    assert opened == ["bert-base-uncased"] and _closed(dialog)


def test_the_list_holds_recent_and_built_in_models_and_a_double_click_opens(
    qtbot, window, tmp_path
):
    folder = shutil.copytree(BUILTIN_PRESETS["demo-tiny"], tmp_path / "my-model")
    window.context.models.set_source(str(folder))
    dialog = _open_dialog(qtbot, window)
    texts = [dialog.model_list.item(row).text() for row in range(dialog.model_list.count())]
    assert texts[:2] == ["Recent", str(folder)]
    assert texts[2] == "Built-in"
    assert "demo-spam — classifier" in texts and "demo — pretrained" in texts
    opened = []
    window.context.opener.open = opened.append
    row = texts.index("demo-spam — classifier")
    item = dialog.model_list.item(row)
    dialog.model_list.setCurrentItem(item)
    assert dialog.name_edit.text() == "demo-spam"
    dialog.model_list.itemActivated.emit(item)
    assert opened == ["demo-spam"]


@pytest.mark.parametrize("button_name", ["folder_button", "file_button"])
def test_the_folder_and_file_buttons_open_what_they_choose(
    qtbot, window, tmp_path, monkeypatch, button_name
):
    folder = shutil.copytree(BUILTIN_PRESETS["demo-tiny"], tmp_path / "chosen")
    keras_file = tmp_path / "model.keras"
    keras_file.write_bytes(b"")
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *args: str(folder))
    monkeypatch.setattr(
        QFileDialog, "getOpenFileName", lambda *args: (str(keras_file), "Keras models")
    )
    dialog = _open_dialog(qtbot, window)
    opened = []
    window.context.opener.open = opened.append
    qtbot.mouseClick(getattr(dialog, button_name), Qt.MouseButton.LeftButton)
    expected = folder if button_name == "folder_button" else keras_file
    assert opened == [str(expected)] and _closed(dialog)


def test_model_source_problems(tmp_path):
    assert model_source_problem("demo") == ""
    assert model_source_problem("hf://google-bert/bert-base-uncased") == ""
    assert model_source_problem("hf://bert") == (
        "hf://bert is no Hugging Face repository: write hf://owner/name."
    )
    assert model_source_problem(str(tmp_path)) == ""
    (tmp_path / "notes.txt").write_text("x")
    assert model_source_problem(str(tmp_path / "notes.txt")) == (
        "notes.txt is a file, not a model: choose its folder, or a .keras file."
    )
    gone = tmp_path / "gone"
    assert model_source_problem(str(gone)) == f"There is no folder or file {gone}."
    assert model_source_problem("someone/some-bert").endswith(
        "For the Hugging Face repository, write hf://someone/some-bert."
    )
