"""The confusion matrix marks the cell whose examples are listed, and no cell once the
rows are chosen otherwise ("Show all", another filter)."""

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from kbert_gui.evaluation.evaluation_browser import EvaluationBrowser

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"


@pytest.fixture
def browser(qtbot, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import evaluation_browser_steps

    predictions = evaluation_browser_steps.synthetic_predictions(40, seed=1)
    widget = EvaluationBrowser(predictions, "dev.csv — model", file_dialogs=None)
    qtbot.addWidget(widget)
    widget.show()
    return widget


def _marked(browser):
    return [
        (index.row(), index.column()) for index in browser.matrix.selectionModel().selectedIndexes()
    ]


def test_show_all_unmarks_the_clicked_cell(qtbot, browser):
    cell = browser.matrix_model.index(0, 1)
    where = browser.matrix.visualRect(cell).center()
    qtbot.mouseClick(browser.matrix.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert _marked(browser) == [(0, 1)]
    assert browser.filter_bar.filters()["gold"] == "neg"
    browser.filter_bar.clear_button.click()
    assert _marked(browser) == []
    assert browser.filter_model.rowCount() == 40

    # Choosing the pair in the filters marks its cell; "errors only" on top unmarks it.
    browser.filter_bar.set_pair("pos", "neg")
    assert _marked(browser) == [(1, 0)]
    browser.filter_bar.errors_only.setChecked(True)
    assert _marked(browser) == []
