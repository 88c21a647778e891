"""Help ▸ Documentation (F1) opens the README at the app's own part, not at the install."""

from PySide6.QtCore import QPoint

from gui_helpers import one_tab_window
from gui_helpers import stop_context
from kbert_gui.window.documentation_dialog import APP_SECTION


def test_f1_opens_the_readme_at_the_desktop_app(qtbot, tmp_path):
    window = one_tab_window(qtbot, tmp_path)
    try:
        dialog = window.show_documentation()
        qtbot.waitExposed(dialog)
        browser = dialog.browser
        assert browser.verticalScrollBar().value() > 0
        top = browser.cursorForPosition(QPoint(4, 4)).block()
        assert top.text() == APP_SECTION and top.blockFormat().headingLevel() == 2
        dialog.close()
    finally:
        stop_context(window.context)
