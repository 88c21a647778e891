"""Help ▸ Keyboard shortcuts: every shortcut of the menus and the tabs, in one table."""

from PySide6.QtGui import QKeySequence
from PySide6.QtGui import QShortcut
from PySide6.QtGui import QStandardItem
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QAbstractButton
from PySide6.QtWidgets import QAbstractItemView
from PySide6.QtWidgets import QDialog
from PySide6.QtWidgets import QHeaderView
from PySide6.QtWidgets import QTableView

from kbert_gui.widgets.close_button_layout import lay_out_with_close_button
from kbert_gui.widgets.table_context_menu import TableContextMenu


class KeyboardShortcutsDialog(QDialog):
    """A table of `(where, what, keys)`, read from the window itself.

    The menus' actions give their menu, their text and their shortcut; each tab's
    `QShortcut`s give the tab, their `whatsThis()` (or, without one, the tooltip of
    the widget they belong to) and their keys, and its buttons with a shortcut of their
    own give their text. Nothing is listed by hand, so the table
    cannot drift from what the keys do.

    Args:
        menus: the window's `QMenu`s.
        tabs: `(title, widget)` of each tab.
        parent: the parent widget.
    """

    def __init__(self, menus, tabs, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.model = QStandardItemModel(0, 3, self)
        self.model.setHorizontalHeaderLabels(["Where", "What", "Keys"])
        for where, what, keys in shortcut_rows(menus, tabs):
            self.model.appendRow([QStandardItem(where), QStandardItem(what), QStandardItem(keys)])
        self.view = QTableView()
        self.view.setObjectName("shortcutsView")
        self.view.setModel(self.model)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.verticalHeader().hide()
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.view.horizontalHeader().setStretchLastSection(True)
        TableContextMenu(self.view)
        lay_out_with_close_button(self, self.view)
        self.resize(560, 480)


def shortcut_rows(menus, tabs):
    """`(where, what, keys)` for every action with a shortcut, every tab `QShortcut` and
    every tab button with a shortcut."""
    rows = []
    for menu in menus:
        for action in _actions(menu):
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            if keys:
                rows.append((_plain(menu.title()), _plain(action.text()), keys))
    for title, widget in tabs:
        for shortcut in widget.findChildren(QShortcut):
            keys = shortcut.key().toString(QKeySequence.SequenceFormat.NativeText)
            parent = shortcut.parent()
            what = shortcut.whatsThis() or (parent.toolTip() if parent is not widget else "")
            rows.append((_plain(title), what or "(in this tab)", keys))
        for button in widget.findChildren(QAbstractButton):
            keys = button.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            if keys:  # a button's own shortcut ("Start", Ctrl+Return)
                rows.append((_plain(title), _plain(button.text()), keys))
    return rows


def _actions(menu):
    for action in menu.actions():
        if action.menu() is not None:
            yield from _actions(action.menu())
        elif not action.isSeparator():
            yield action


def _plain(text):
    """A menu text without its mnemonic ampersands ("&File" -> "File", "&&" -> "&")."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")
