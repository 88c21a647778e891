"""File ▸ Compare runs… opens the Runs view on the runs beside the fine-tuning tab's run
folder; a run's setup goes back into the tab's form."""

import types

import pytest
from gui_helpers import make_context
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QLineEdit
from test_runs_view import SETTINGS
from test_runs_view import _record

from kbert_gui.runs.runs_launcher import RunsLauncher
from kbert_gui.window.main_window import MainWindow


# The offscreen platform cannot raise a window (the view raises itself when it opens).
@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_compare_runs_opens_on_the_tabs_runs_and_gives_back_a_setup(qtbot, tmp_path):
    window = MainWindow(make_context(tmp_path), [("plain", QLabel("plain"))])
    qtbot.addWidget(window)
    restored = []
    tuning = types.SimpleNamespace(
        output_edit=QLineEdit(str(tmp_path / "runs" / "next")),
        setup_controller=types.SimpleNamespace(restore=restored.append),
    )
    _record(tmp_path / "runs" / "first")
    launcher = RunsLauncher(window, tuning)
    texts = [action.text() for action in window.file_menu.actions()]
    assert texts.index("Compare &runs…") == texts.index("&Export") - 1

    view = launcher.show_runs()
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=20_000)
    assert view.isVisible() and view.folder_edit.text() == str(tmp_path / "runs")
    view.table.selectRow(0)
    view.setup_button.click()
    assert [record.settings for record in restored] == [SETTINGS]
    view.close()
    view.pool.wait_for_done(10_000)
