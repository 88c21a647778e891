"""An inline message is as high as its text: one line of error is one line high, and the
close button keeps clear of the text."""

import pytest
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.widgets.error_banner import ErrorBanner
from kbert_gui.widgets.warning_banner import WarningBanner

ONE_LINE = "The training file has no label column."


def _shown_in_form(qtbot, banner, message, width=900):
    """`banner` above a line edit in a form `width` wide, showing `message`; the form
    (keep it: it owns the banner) and the edit."""
    form = QWidget()
    qtbot.addWidget(form)
    layout = QVBoxLayout(form)
    layout.addWidget(banner)
    edit = QLineEdit()
    layout.addWidget(edit)
    layout.addStretch(1)
    form.resize(width, 400)
    form.show()
    qtbot.waitExposed(form)
    banner.show_message(message)
    qtbot.waitUntil(lambda: banner.isVisible() and banner.height() > 0)
    qtbot.wait(10)  # the layout settles
    return form, edit


@pytest.mark.parametrize("kind", [ErrorBanner, WarningBanner])
def test_a_one_line_message_is_one_line_high(qtbot, kind):
    banner = kind()
    _form, _edit = _shown_in_form(qtbot, banner, ONE_LINE)
    line = banner.fontMetrics().height()
    # One line of text, its padding and border: less than two lines of text.
    assert banner.height() < 2 * line + 4, (banner.height(), line)


def test_a_long_message_wraps_and_grows(qtbot):
    banner = ErrorBanner()
    _form, _edit = _shown_in_form(qtbot, banner, " ".join([ONE_LINE] * 12), width=500)
    assert banner.height() >= 3 * banner.fontMetrics().height()


def test_the_close_button_keeps_clear_of_the_text(qtbot):
    banner = ErrorBanner()
    _form, _edit = _shown_in_form(qtbot, banner, ONE_LINE)
    button = banner.close_button.geometry()
    assert banner.close_button.isVisible()
    assert banner.contentsRect().right() < button.left()
    assert banner.rect().contains(button)


def test_the_widgets_below_move_by_one_line_only(qtbot):
    banner = ErrorBanner()
    _form, edit = _shown_in_form(qtbot, banner, ONE_LINE)
    banner.clear_error()
    qtbot.waitUntil(lambda: not banner.isVisible())
    qtbot.wait(10)
    top = edit.y()
    banner.show_error(ONE_LINE)
    qtbot.waitUntil(lambda: edit.y() > top)
    assert edit.y() - top < 2 * banner.fontMetrics().height() + 12
