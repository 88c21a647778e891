"""Links from one tab's warning to another tab: the fine-tuning link of the QA tab's
no-head warning sets the fine-tuning task to question answering."""

import re

from fine_tuning_helpers import data  # noqa: F401 (a fixture)
from fine_tuning_helpers import tab  # noqa: F401 (a fixture)

from kbert_gui.question_answering.question_answering_tab import QuestionAnsweringTab
from kbert_gui.tab_key import TabKey

TIMEOUT_MS = 60_000


def test_the_qa_warnings_fine_tuning_link_sets_the_task_to_question_answering(qtbot, tab):
    # `tab` is the fine-tuning tab on a bare backbone preset (no QA head).
    qa = QuestionAnsweringTab(tab.context)
    qtbot.addWidget(qa)
    qa.show()
    qtbot.waitUntil(lambda: qa.head_warning.isVisible(), timeout=TIMEOUT_MS)
    warning = qa.head_warning.text()
    assert warning.startswith("preset has no trained QA head, so its answers are random:")
    assert "File ▸ Open model…" in warning and "\n" not in warning
    (href,) = re.findall(r'href="([^"]+)"', warning)
    assert tab.task() == "classification"

    with qtbot.waitSignal(tab.context.tab_requested) as shown:
        qa.head_warning.linkActivated.emit(href)
    assert shown.args == [TabKey.FINE_TUNING]
    assert tab.task() == "qa"
    assert tab.task_box.currentText() == "Question answering (SQuAD)"
