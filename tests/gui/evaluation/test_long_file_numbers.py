"""Numbers of a long file read as numbers: "1,606,296", not "1606296" or "160…"."""

from PySide6.QtCore import Qt

from kbert.finetuning.evaluation_predictions import EvaluationPredictions
from kbert_gui.evaluation.confusion_matrix_model import ConfusionMatrixModel
from kbert_gui.evaluation.evaluation_browser import EvaluationBrowser
from kbert_gui.evaluation.evaluation_browser import summary_text
from kbert_gui.evaluation.prediction_table_model import display_text

COLUMNS = ("index", "line", "text", "gold", "predicted", "probability", "correct")


def _predictions(first_line=1_606_296, count=3):
    rows = tuple(
        {"index": index, "line": first_line + index, "text": "some text", "gold": "a",
         "predicted": "b", "probability": 0.612, "correct": False}
        for index in range(count)
    )
    return EvaluationPredictions("classification", COLUMNS, rows, {"accuracy": 0.5}, ("a", "b"))


def test_counts_and_lines_have_thousands_separators():
    assert display_text("line", 1606296) == "1,606,296"
    assert display_text("index", 7) == "7"
    assert display_text("correct", True) == "✓"
    assert summary_text(_predictions(count=1200)).startswith("classification, 1,200 examples:")
    matrix = ConfusionMatrixModel()
    matrix.set_matrix(["a", "b"], [[0, 12_000], [0, 0]])
    assert matrix.index(0, 1).data() == "12,000"


def test_the_line_column_shows_a_long_files_line_numbers_whole(qtbot):
    browser = EvaluationBrowser(_predictions(), "dev.csv — model", file_dialogs=None)
    qtbot.addWidget(browser)
    browser.show()
    qtbot.waitExposed(browser)
    table = browser.table
    column = browser.rows_model.keys.index("line")
    shown = table.model().index(2, column).data()
    assert shown == "1,606,298"
    assert table.fontMetrics().horizontalAdvance(shown) + 8 <= table.columnWidth(column)
    assert browser.count_label.text() == "3 of 3 examples shown"
    assert table.model().headerData(column, Qt.Orientation.Horizontal) == "Line"
