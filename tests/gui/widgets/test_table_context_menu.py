"""The context menu every table and tree of the app has: copy the row, copy as CSV."""

import csv
import io

import pytest

from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtGui import QStandardItem
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView
from PySide6.QtWidgets import QApplication
from PySide6.QtWidgets import QTableView
from PySide6.QtWidgets import QTreeView

from kbert_gui.widgets.table_context_menu import TableContextMenu

ROWS = [
    ["Paris", "41.2%", "3–8"],
    ['say "hi", then', "0.5%", "10–12"],
    ["Rome", "0.1%", "1–2"],
]


def _table(qtbot):
    model = QStandardItemModel(0, 3)
    model.setHorizontalHeaderLabels(["Token", "Probability", "Characters"])
    for row in ROWS:
        model.appendRow([QStandardItem(cell) for cell in row])
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    qtbot.addWidget(view)
    return view, TableContextMenu(view)


def test_copy_row_copies_the_selected_rows_tab_separated(qtbot):
    view, menu = _table(qtbot)
    assert TableContextMenu.of(view) is menu
    view.selectRow(2)
    view.selectionModel().select(
        view.model().index(0, 0),
        view.selectionModel().SelectionFlag.Select | view.selectionModel().SelectionFlag.Rows,
    )
    menu.copy_row_action.trigger()
    assert QGuiApplication.clipboard().text() == "Paris\t41.2%\t3–8\nRome\t0.1%\t1–2"


def test_copy_as_csv_copies_the_header_and_every_row(qtbot):
    view, menu = _table(qtbot)
    menu.copy_csv_action.trigger()
    parsed = list(csv.reader(io.StringIO(QGuiApplication.clipboard().text())))
    assert parsed == [["Token", "Probability", "Characters"]] + ROWS


# The offscreen platform cannot raise a popup or grab the keyboard for it; it says so.
@pytest.mark.qt_log_ignore("This plugin does not support (raise|grabbing the keyboard)")
def test_right_click_offers_both_actions_for_the_row_under_the_mouse(qtbot):
    view, menu = _table(qtbot)
    view.show()
    qtbot.waitExposed(view)
    view.selectRow(0)
    seen = []

    def use_the_menu():
        popup = QApplication.activePopupWidget()
        seen.extend(action.text() for action in popup.actions())
        # The row under the mouse (row 1) is copied, not the selected one.
        menu.copy_row_action.trigger()
        popup.close()

    QTimer.singleShot(100, use_the_menu)
    view.customContextMenuRequested.emit(view.visualRect(view.model().index(1, 1)).center())
    assert seen == ["Copy row", "Copy as CSV"]
    assert QGuiApplication.clipboard().text() == 'say "hi", then\t0.5%\t10–12'


def test_a_tree_is_copied_depth_first(qtbot):
    model = QStandardItemModel(0, 2)
    model.setHorizontalHeaderLabels(["Name", "Value"])
    parent = [QStandardItem("mask 1"), QStandardItem("")]
    parent[0].appendRow([QStandardItem("cat"), QStandardItem("0.9")])
    model.appendRow(parent)
    model.appendRow([QStandardItem("mask 2"), QStandardItem("")])
    view = QTreeView()
    view.setModel(model)
    qtbot.addWidget(view)
    menu = TableContextMenu(view)
    menu.copy_csv_action.trigger()
    assert QGuiApplication.clipboard().text() == "Name,Value\nmask 1,\ncat,0.9\nmask 2,\n"
