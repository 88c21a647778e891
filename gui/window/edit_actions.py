"""Edit ▸ Undo, Redo, Cut, Copy, Paste, Select all: acting on the focused widget."""

from PySide6.QtCore import QObject
from PySide6.QtCore import Slot
from PySide6.QtGui import QAction
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractItemView
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QPlainTextEdit
from PySide6.QtWidgets import QTextEdit

from kbert_gui.widgets.table_context_menu import TableContextMenu

# (attribute, menu text, standard key, method of the text widget)
_ACTIONS = (
    ("undo", "&Undo", QKeySequence.StandardKey.Undo, "undo"),
    ("redo", "&Redo", QKeySequence.StandardKey.Redo, "redo"),
    ("cut", "Cu&t", QKeySequence.StandardKey.Cut, "cut"),
    ("copy", "&Copy", QKeySequence.StandardKey.Copy, "copy"),
    ("paste", "&Paste", QKeySequence.StandardKey.Paste, "paste"),
    ("select_all", "Select &all", QKeySequence.StandardKey.SelectAll, "selectAll"),
)
_METHODS = {name: method for name, _text, _key, method in _ACTIONS}


class EditActions(QObject):
    """The Edit menu's actions, for whatever widget of `window` has the focus.

    In a line edit or text editor they undo, redo, cut, copy, paste and select as the
    widget's own shortcuts do (each keeps its undo history); in a table or tree with a
    `TableContextMenu`, Copy copies the selected rows. `update_enabled()` (called as
    the menu opens) enables what applies to the focused widget: Undo only with
    something to undo, Cut and Paste only where the text is editable. While the menu is
    closed every action stays enabled, so its shortcut reaches the focused widget, and
    an action that does not apply does nothing.

    Args:
        window: the main window (whose `focusWidget()` is acted on).
    """

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.actions = []
        for name, text, key, _method in _ACTIONS:
            action = QAction(text, window)
            action.setShortcut(key)
            action.triggered.connect(lambda checked=False, name=name: self.trigger(name))
            setattr(self, name, action)
            self.actions.append(action)

    def trigger(self, name):
        """Does `name` ("undo", "copy", ...) on the focused widget, where it applies."""
        widget = self.window.focusWidget()
        if _is_text_widget(widget):
            if self._applies(name, widget):
                getattr(widget, _METHODS[name])()
        elif name == "copy" and isinstance(widget, QAbstractItemView):
            menu = TableContextMenu.of(widget)
            if menu is not None:
                menu.copy_rows()

    @Slot()
    def update_enabled(self):
        """Enables the actions that apply to the focused widget."""
        widget = self.window.focusWidget()
        for (name, *_), action in zip(_ACTIONS, self.actions):
            if _is_text_widget(widget):
                action.setEnabled(self._applies(name, widget))
            else:
                action.setEnabled(
                    name == "copy"
                    and isinstance(widget, QAbstractItemView)
                    and TableContextMenu.of(widget) is not None
                )

    @Slot()
    def enable_all(self):
        for action in self.actions:
            action.setEnabled(True)

    @staticmethod
    def _applies(name, widget):
        editable = not widget.isReadOnly()
        if isinstance(widget, QLineEdit):
            has_selection = widget.hasSelectedText()
            can_undo, can_redo = widget.isUndoAvailable(), widget.isRedoAvailable()
        else:
            has_selection = widget.textCursor().hasSelection()
            document = widget.document()
            can_undo, can_redo = document.isUndoAvailable(), document.isRedoAvailable()
        return {
            "undo": editable and can_undo,
            "redo": editable and can_redo,
            "cut": editable and has_selection,
            "copy": has_selection,
            "paste": editable,
            "select_all": True,
        }[name]


def _is_text_widget(widget):
    return isinstance(widget, (QLineEdit, QPlainTextEdit, QTextEdit))
