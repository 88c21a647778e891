"""The evaluation rows' models: a sort is Python's stable sort of the cells, the filters
choose the rows Python's comparisons choose, and a selected row follows a sort."""

import random

import pytest
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtCore import Qt

from kbert.finetuning.evaluation_predictions import EvaluationPredictions
from kbert_gui.evaluation.prediction_filter_model import PredictionFilterModel
from kbert_gui.evaluation.prediction_table_model import PredictionTableModel
from kbert_gui.evaluation.prediction_table_model import display_text

COLUMNS = ("index", "text", "gold", "predicted", "probability", "correct")


def _predictions(count=60, seed=0):
    generator = random.Random(seed)
    rows = []
    for index in range(count):
        gold, predicted = generator.choice("ab"), generator.choice("abc")
        probability = None if index % 7 == 0 else round(generator.random(), 1)
        text = generator.choice(["Ball", "ball", "letter", "a dance", "Zebra", ""])
        rows.append(
            dict(index=index, text=text, gold=gold, predicted=predicted,
                 probability=probability, correct=gold == predicted)
        )
    return EvaluationPredictions("classification", COLUMNS, tuple(rows), {}, ("a", "b", "c"))


def _python_key(value):
    if isinstance(value, (bool, int, float)):
        return (0, float(value), "")
    if value is None:
        return (0, -1.0, "")
    return (1, 0.0, display_text("", value).lower())


@pytest.fixture
def models(qtmodeltester):
    rows, view = PredictionTableModel(), PredictionFilterModel()
    view.setSourceModel(rows)
    rows.set_predictions(_predictions())
    qtmodeltester.check(rows)
    qtmodeltester.check(view)
    return rows, view


def test_sorts_are_pythons_stable_sorts_one_after_another(models):
    rows, view = models
    expected = list(rows.records)
    for key, descending in [("text", False), ("probability", True), ("correct", False),
                            ("gold", True), ("text", True), ("index", False)]:
        order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
        view.sort(rows.keys.index(key), order)
        expected = sorted(expected, key=lambda row: _python_key(row[key]), reverse=descending)
        assert [row["index"] for row in rows.rows()] == [row["index"] for row in expected]
        assert view.shown_rows() == expected


def test_filters_choose_the_rows_python_chooses_in_the_sorted_order(models):
    rows, view = models
    view.sort(rows.keys.index("probability"), Qt.SortOrder.DescendingOrder)
    cases = [
        (dict(errors_only=True), lambda r: not r["correct"]),
        (dict(errors_only=False, gold="a", predicted="c"),
         lambda r: r["gold"] == "a" and r["predicted"] == "c"),
        (dict(gold=None, predicted=None, low=0.2, high=0.6),
         lambda r: r["probability"] is not None and 0.2 <= r["probability"] <= 0.6),
        (dict(low=0.0, high=1.0), lambda r: True),
    ]
    for filters, passes in cases:
        view.set_filters(**filters)
        assert view.shown_rows() == [row for row in rows.rows() if passes(row)]
        assert view.rowCount() == len(view.shown_rows())
        shown = view.index(0, rows.keys.index("text"))
        assert shown.data() == display_text("text", view.shown_rows()[0]["text"])


def test_a_selected_row_stays_selected_through_a_sort(models):
    rows, view = models
    view.set_filters(errors_only=True)
    selection = QItemSelectionModel(view)
    chosen = view.shown_rows()[3]
    selection.select(view.index(3, 0), QItemSelectionModel.SelectionFlag.Select)
    view.sort(rows.keys.index("text"), Qt.SortOrder.DescendingOrder)
    (selected,) = selection.selectedIndexes()
    assert view.shown_rows()[selected.row()] is chosen


def test_the_selected_rows_in_view_stay_selected_through_a_filter(qtbot):
    from kbert_gui.evaluation.evaluation_browser import EvaluationBrowser

    browser = EvaluationBrowser(_predictions(), "synthetic", file_dialogs=None)
    qtbot.addWidget(browser)
    view, selection = browser.filter_model, browser.table.selectionModel()
    for row in (1, 2, 3, 10, 20):
        rows = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        selection.select(view.index(row, 0), rows)
    chosen = [view.shown_rows()[row] for row in (1, 2, 3, 10, 20)]
    assert len(selection.selectedRows()) == 5
    selection.setCurrentIndex(view.index(20, 1), QItemSelectionModel.SelectionFlag.NoUpdate)
    browser.filter_bar.errors_only.setChecked(True)
    selected = [view.shown_rows()[index.row()] for index in selection.selectedRows()]
    wrong = [row for row in chosen if not row["correct"]]
    assert wrong and len(wrong) < len(chosen)
    assert sorted(row["index"] for row in selected) == [row["index"] for row in wrong]
    current = selection.currentIndex()
    assert (view.shown_rows()[current.row()] is chosen[-1]) == (not chosen[-1]["correct"])
