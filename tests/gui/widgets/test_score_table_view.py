"""Score tables never cut a title or a value: at the fine-tuning tab's default size every
title fits on one line; narrower, titles wrap at their spaces and the header grows; at
the narrowest a scroll bar shows the rest."""

import pytest
from PySide6.QtCore import QRect
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QStyle

from kbert_gui.fine_tuning.evaluation_table_model import EvaluationTableModel
from kbert_gui.fine_tuning.fine_tuning_panel import FineTuningPanel
from kbert_gui.widgets.score_table_view import ScoreTableView
from kbert_gui.window.main_window import DEFAULT_SIZE

ROWS = {
    "classification": {"epoch": 1, "loss": 0.674, "learning_rate": 0.000955, "accuracy": 0.875,
                       "macro_f1": 0.87, "matthews_corrcoef": 0.75},
    "token-classification": {"epoch": 1, "loss": 0.674, "learning_rate": 0.000955, "f1": 0.875,
                             "precision": 0.87, "recall": 0.75},
    "qa": {"epoch": 1, "loss": 0.674, "learning_rate": 0.000955, "exact_match": 66.67,
           "f1": 77.0},
}


def _margin(header):
    return 2 * header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)


def _cut(view, one_line):
    """The titles and values of `view` that do not fit their column (titles on one line
    when `one_line`, else on the lines the header has room for)."""
    header, model = view.horizontalHeader(), view.model()
    metrics = header.fontMetrics()
    bold = QFont(view.font())
    bold.setBold(True)
    cells = QFontMetrics(bold)
    cut = []
    for column in range(model.columnCount()):
        size = header.sectionSize(column)
        title = str(model.headerData(column, Qt.Orientation.Horizontal))
        if one_line:
            fits = metrics.horizontalAdvance(title) + _margin(header) <= size
        else:
            room = QRect(0, 0, size - _margin(header), 10_000)
            wrapped = metrics.boundingRect(room, int(Qt.TextFlag.TextWordWrap), title)
            fits = wrapped.width() <= room.width() and wrapped.height() <= header.height()
        if not fits:
            cut.append(title)
        for row in range(model.rowCount()):
            text = str(model.index(row, column).data())
            if cells.horizontalAdvance(text) + 6 > size:
                cut.append(text)
    return cut


def _shown(qtbot, widget, width, height=400):
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    qtbot.wait(20)  # the columns follow the model and the width


@pytest.mark.parametrize("task", sorted(ROWS))
def test_every_title_fits_on_one_line_at_the_default_size(qtbot, task):
    panel = FineTuningPanel()
    panel.pages.setCurrentIndex(1)
    panel.evaluation_model.in_percent = task == "qa"
    panel.evaluation_model.set_rows([ROWS[task]], 0, "best")
    _shown(qtbot, panel, *DEFAULT_SIZE)
    assert _cut(panel.evaluation_view, one_line=True) == []


@pytest.mark.parametrize("width", [345, 370, 420])
def test_narrow_titles_wrap_and_nothing_is_cut(qtbot, width):
    model = EvaluationTableModel()
    model.set_rows([ROWS["classification"]], 0, "best")
    view = ScoreTableView(model, "scores")
    _shown(qtbot, view, width)
    assert _cut(view, one_line=False) == []
    assert not view.horizontalScrollBar().isVisible()


def test_too_narrow_for_all_scrolls_rather_than_cuts(qtbot):
    model = EvaluationTableModel()
    model.set_rows([ROWS["classification"]])
    view = ScoreTableView(model, "scores")
    _shown(qtbot, view, 160)
    assert _cut(view, one_line=False) == []
    assert view.horizontalScrollBar().maximum() > 0
