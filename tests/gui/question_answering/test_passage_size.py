"""The QA passage's size limit: a paste, a drop or a set text over 1 MB is refused in one
line, as opening such a file is, and answering never ends in a MemoryError."""

import pytest
from PySide6.QtCore import QMimeData
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from gui_helpers import make_context
from gui_helpers import stop_context
from kbert_gui.question_answering.answer_report import AnswerReport
from kbert_gui.question_answering.answer_request import AnswerRequest
from kbert_gui.question_answering.question_answering_tab import QuestionAnsweringTab

SENTENCE = "Alice is the queen of Rome . "
# 1.5 MB of text: half again what the tab takes.
TOO_LARGE = SENTENCE * (1_500_000 // len(SENTENCE) + 1)
LIMIT_LINE = "the QA tab takes passages up to 1 MB. Paste or open the part you need instead."


@pytest.fixture
def tab(qtbot, tmp_path):
    """A QA tab, never shown (nothing loads the model)."""
    context = make_context(tmp_path)
    widget = QuestionAnsweringTab(context)
    qtbot.addWidget(widget)
    yield widget
    stop_context(context)


def test_a_paste_over_the_limit_is_refused_in_one_line(qtbot, tab):
    tab.passage_view.set_passage(SENTENCE)
    QApplication.clipboard().setText(TOO_LARGE)
    tab.passage_view.setFocus()
    tab.passage_view.paste()
    assert tab.passage_view.passage() == SENTENCE
    message = tab.error_banner.message
    assert message == f"Not pasted: the passage would be 1.5 MB; {LIMIT_LINE}"
    assert "\n" not in message

    # A drop reads the same mime data; replacing a selection counts what stays.
    data = QMimeData()
    data.setText(TOO_LARGE[: 999_000 - len(SENTENCE)])
    tab.passage_view.selectAll()
    tab.passage_view.insertFromMimeData(data)
    assert len(tab.passage_view.passage()) == 999_000 - len(SENTENCE)
    data.setText(SENTENCE * 100)
    tab.passage_view.insertFromMimeData(data)
    assert len(tab.passage_view.passage()) == 999_000 - len(SENTENCE)
    assert tab.error_banner.message.startswith("Not pasted: the passage would be 1.0 MB;")


def test_a_text_set_over_the_limit_is_refused_and_a_small_one_is_taken(qtbot, tab):
    assert not tab.passage_view.set_passage(TOO_LARGE)
    assert tab.passage_view.passage() == ""
    assert tab.error_banner.message == f"The passage would be 1.5 MB; {LIMIT_LINE}"
    assert tab.passage_view.set_passage(SENTENCE)
    assert tab.passage_view.passage() == SENTENCE


def test_answering_a_passage_over_the_limit_says_so_in_one_line(qtbot, tab):
    # However the text got there, the answer path refuses it before the model reads it.
    tab.passage_view.setPlainText(SENTENCE * 40_000)  # 1.2 MB
    tab.question_edit.setText("who is the queen ?")
    with qtbot.waitSignal(tab.controller.runner.error, timeout=60_000) as blocker:
        qtbot.mouseClick(tab.answer_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [f"The passage is 1.2 MB; {LIMIT_LINE}"]
    assert tab.error_banner.message == blocker.args[0]


class _ModelOutOfMemory:
    freshly_initialized_heads = ()

    def answer(self, *args, **kwargs):
        raise MemoryError("Unable to allocate 150. GiB for an array")


class _Models:
    def model(self, task_class, source):
        return _ModelOutOfMemory()


def test_a_memory_error_while_answering_becomes_one_line():
    request = AnswerRequest("demo", "who ?", SENTENCE * 10, 5, None, shade=True)
    with pytest.raises(ValueError) as raised:
        AnswerReport.compute(_Models(), request)
    assert str(raised.value) == (
        "The passage (290 characters) is too long to answer in this computer's memory: "
        "answer from a shorter part of it."
    )
