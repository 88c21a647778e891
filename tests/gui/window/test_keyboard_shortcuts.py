"""Help ▸ Keyboard shortcuts on the app's own window: every row says what its keys do."""

from gui_helpers import make_context
from gui_helpers import stop_context

from kbert_gui.app import create_window


def test_every_shortcut_of_the_app_says_what_it_does(qtbot, tmp_path):
    window = create_window(context=make_context(tmp_path))
    qtbot.addWidget(window)
    try:
        dialog = window.show_keyboard_shortcuts()
        rows = {
            tuple(dialog.model.item(row, column).text() for column in range(3))
            for row in range(dialog.model.rowCount())
        }
        dialog.close()
        assert not [row for row in rows if row[1] in ("", "(in this tab)")], rows
        assert {
            ("Masked words", "Insert [MASK] at the cursor", "Ctrl+M"),
            ("Question answering", "Answer the question from the passage", "Ctrl+Return"),
            ("Question answering", "Answer the question from the passage", "Ctrl+Enter"),
            ("Fine-tuning", "Cancel the run (asks first)", "Esc"),
            ("Fine-tuning", "Start", "Ctrl+Return"),
        } <= rows
    finally:
        stop_context(window.context)
