"""The question-answering tab: exact highlights, n-best, no answer, files, warnings."""

import csv
import json
import os

import keras
import numpy as np
import pytest
from PySide6.QtCore import Qt

from kbert_gui.question_answering.answer_list_model import AnswerListModel
from kbert_gui.question_answering.answer_report import AnswerReport
from kbert_gui.question_answering.answer_list_model import AnswerRole
from kbert_gui.widgets.qt_text_positions import QtTextPositions
from kbert_gui.question_answering.question_answering_tab import QuestionAnsweringTab
from kbert_gui.tab_key import TabKey
from kbert_gui.widgets.probability_text import probability_text

from gui_helpers import FROZEN_WINDOW_MS
from gui_helpers import Heartbeat
from gui_helpers import record_threads
from gui_helpers import make_context
from gui_helpers import stop_context
from inference_helpers import plant_logits
from kbert.inference import AnswerSpan
from fine_tuning_data import VOCABULARY
from fine_tuning_data import make_tiny_preset

# Emoji (two UTF-16 units each) and accents before, inside and after every answer.
PASSAGE = (
    "😀 Café naïve: 🎉 the cat sat on the mat . Alice 👩‍🔬 is the king of Rome . "
    "the dog ran near the river 🌊 and Bob is the chef of Paris . Crème brûlée 🍮 ."
)
QUESTION = "who is the king of Rome ?"
TIMEOUT_MS = 60000


@pytest.fixture(scope="module")
def presets(tmp_path_factory):
    """A QA preset with a (random but saved) span head, and a bare backbone preset."""
    from kbert.models import BertBackbone
    from kbert.models import BertQuestionAnswerer
    from kbert.tokenizer import BertTokenizer

    keras.utils.set_random_seed(7)
    folder = tmp_path_factory.mktemp("qa_presets")
    backbone_preset = make_tiny_preset(folder / "backbone")
    tokenizer = BertTokenizer(list(VOCABULARY), lowercase=True, max_length=64)
    model = BertQuestionAnswerer(BertBackbone.from_preset(backbone_preset))
    model.save_to_preset(folder / "qa", tokenizer=tokenizer)
    return {"qa": str(folder / "qa"), "backbone": str(backbone_preset)}


@pytest.fixture
def open_tab(qtbot, tmp_path):
    """Makes a shown `QuestionAnsweringTab` on a preset; stops its workers afterwards."""
    contexts = []

    def open_tab(source, live=False):
        context = make_context(tmp_path, source)
        contexts.append(context)
        tab = QuestionAnsweringTab(context)
        qtbot.addWidget(tab)
        tab.live_check.setChecked(live)
        tab.resize(1000, 640)
        tab.show()
        return tab

    yield open_tab
    for context in contexts:
        stop_context(context)


def _answer(qtbot, tab, click=True):
    """Asks the tab's question (by clicking Answer); returns the `AnswerReport`."""
    with qtbot.waitSignal(tab.controller.runner.result, timeout=TIMEOUT_MS) as blocker:
        if click:
            qtbot.mouseClick(tab.answer_button, Qt.MouseButton.LeftButton)
    return blocker.args[0]


def _plant_answer(monkeypatch, model, start_token, end_token):
    """The model's start logits peak on `start_token`, its end logits on `end_token`."""
    tokenizer = model.tokenizer
    start_id, end_id = tokenizer.token_to_id(start_token), tokenizer.token_to_id(end_token)

    def bonus(inputs):
        token_ids = inputs["token_ids"]
        return {
            "start_logits": np.where(token_ids == start_id, 100.0, 0.0).astype("float32"),
            "end_logits": np.where(token_ids == end_id, 100.0, 0.0).astype("float32"),
        }

    plant_logits(monkeypatch, model, bonus)


def _click_check_box(qtbot, check_box):
    # On its indicator: the box may be wider than its label.
    position = check_box.rect().center()
    position.setX(8)
    qtbot.mouseClick(check_box, Qt.MouseButton.LeftButton, pos=position)


def _assert_highlights(tab, answer):
    """The highlight covers exactly `answer`'s characters, in Python and Qt terms."""
    passage = tab.passage_view.passage()
    selection = tab.passage_view.answer_selection()
    assert selection is not None
    cursor = selection.cursor
    assert cursor.selectedText() == passage[answer.start : answer.end] == answer.text
    # Qt counts UTF-16 units: each emoji before the answer shifts it by one.
    assert cursor.selectionStart() == len(passage[: answer.start].encode("utf-16-le")) // 2
    assert cursor.selectionEnd() == len(passage[: answer.end].encode("utf-16-le")) // 2
    assert tab.passage_view.highlighted_span() == (answer.start, answer.end)


def test_best_and_selected_answers_are_highlighted_exactly(qtbot, open_tab, presets):
    tab = open_tab(presets["qa"])
    tab.passage_view.set_passage(PASSAGE)
    qtbot.keyClicks(tab.question_edit, QUESTION)
    tab.top_k_spin.setValue(4)
    report = _answer(qtbot, tab)

    result = report.result
    assert (result.question, result.context) == (QUESTION, PASSAGE)
    assert not result.is_impossible and len(result.answers) == 4
    best = result.answers[0]
    assert any(ord(character) > 0xFFFF for character in PASSAGE[: best.end])
    _assert_highlights(tab, best)
    assert tab.best_answer_label.text() == f"“{' '.join(best.text.split())}”"
    assert f"characters {best.start}–{best.end}" in tab.details_label.text()
    assert tab.error_banner.message == "" and tab.head_warning.isHidden()

    model = tab.answers_view.model()
    assert model.rowCount() == 4
    assert [model.answer_at(row) for row in range(4)] == list(result.answers)
    assert tab.answers_view.selectionModel().currentIndex().row() == 0
    # Clicking the second row highlights that answer instead.
    second = result.answers[1]
    rectangle = tab.answers_view.visualRect(model.index(1, 0))
    qtbot.mouseClick(tab.answers_view.viewport(), Qt.MouseButton.LeftButton, pos=rectangle.center())
    assert tab.answers_view.selectionModel().currentIndex().row() == 1
    assert any(ord(character) > 0xFFFF for character in PASSAGE[: second.end])
    _assert_highlights(tab, second)
    # So does selecting it through the selection model (row 3 here).
    tab.answers_view.selectRow(2)
    _assert_highlights(tab, result.answers[2])

    # Editing the passage drops highlights whose offsets would be stale.
    tab.passage_view.set_passage("the cat sat .")
    assert tab.passage_view.answer_selection() is None
    assert model.rowCount() == 0 and tab.best_answer_label.text() == "—"


@pytest.mark.timing
def test_the_window_keeps_answering_while_the_model_answers(qtbot, monkeypatch, open_tab, presets):
    # The first question of the test above, timed (the model loads and answers).
    on_ui_thread = record_threads(monkeypatch, AnswerReport, "compute")
    tab = open_tab(presets["qa"])
    tab.passage_view.set_passage(PASSAGE)
    qtbot.keyClicks(tab.question_edit, QUESTION)
    tab.top_k_spin.setValue(4)
    heartbeat = Heartbeat()
    heartbeat.start()
    report = _answer(qtbot, tab)
    heartbeat.stop()
    assert not report.result.is_impossible and len(report.result.answers) == 4
    assert on_ui_thread == [False]  # loaded and answered in a worker
    assert heartbeat.max_gap_ms < FROZEN_WINDOW_MS


def test_keyboard_answers_and_answering_as_you_type(qtbot, open_tab, presets):
    tab = open_tab(presets["qa"])
    tab.passage_view.set_passage(PASSAGE)
    tab.question_edit.setText(QUESTION)
    tab.activateWindow()
    qtbot.waitUntil(tab.isActiveWindow)
    tab.passage_view.setFocus()
    with qtbot.waitSignal(tab.controller.runner.result, timeout=TIMEOUT_MS):
        qtbot.keyClick(tab.passage_view, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert tab.passage_view.passage() == PASSAGE  # the shortcut typed no line break
    with qtbot.waitSignal(tab.controller.runner.result, timeout=TIMEOUT_MS):
        qtbot.keyClick(tab.question_edit, Qt.Key.Key_Return)

    tab.live_check.setChecked(True)
    with qtbot.waitSignal(tab.controller.runner.result, timeout=TIMEOUT_MS) as blocker:
        qtbot.keyClicks(tab.question_edit, " and who is the chef ?")
    assert blocker.args[0].request.question == QUESTION + " and who is the chef ?"
    _assert_highlights(tab, blocker.args[0].result.answers[0])

    # A question with no room left for the passage: kbert's message, inline.
    tab.live_check.setChecked(False)
    tab.question_edit.setText("who " * 70)
    with qtbot.waitSignal(tab.controller.runner.error, timeout=TIMEOUT_MS):
        tab.answer_now()
    assert "The question has 70 tokens" in tab.error_banner.message
    tab.question_edit.clear()
    tab.answer_now()
    assert tab.error_banner.message == "Type a question first."


def test_no_answer_above_the_null_threshold(qtbot, open_tab, presets):
    tab = open_tab(presets["qa"])
    tab.passage_view.set_passage(PASSAGE)
    tab.question_edit.setText(QUESTION)
    assert not tab.null_threshold_slider.isEnabled()
    _click_check_box(qtbot, tab.allow_no_answer_check)
    assert tab.allow_no_answer_check.isChecked() and tab.null_threshold_slider.isEnabled()

    # The lowest threshold: any span that does not beat [CLS] by 20 is "no answer".
    tab.null_threshold_slider.setValue(tab.null_threshold_slider.minimum())
    assert tab.null_threshold == -20.0
    report = _answer(qtbot, tab)
    assert report.request.null_threshold == -20.0
    assert report.result.is_impossible and report.result.answers == ()
    assert tab.best_answer_label.text() == "No answer"
    assert tab.passage_view.answer_selection() is None
    # The n-best list still shows the best spans; selecting one highlights it.
    model = tab.answers_view.model()
    assert model.rowCount() == 5 and model.answers() == report.best_spans
    tab.answers_view.selectRow(1)
    _assert_highlights(tab, report.best_spans[1])
    comparison = tab.no_answer_label.text()
    assert f"No-answer score {report.result.no_answer_score:.2f}" in comparison
    assert f"best span {report.best_span.score:.2f}" in comparison
    assert "above the null threshold -20.0" in comparison

    # The highest: the best span is the answer again, highlighted.
    tab.null_threshold_slider.setValue(tab.null_threshold_slider.maximum())
    report = _answer(qtbot, tab)
    assert not report.result.is_impossible
    _assert_highlights(tab, report.result.answers[0])
    assert "within the null threshold +20.0" in tab.no_answer_label.text()


def test_shading_start_and_end_probabilities(qtbot, open_tab, presets):
    tab = open_tab(presets["qa"])
    tab.passage_view.set_passage(PASSAGE * 2)  # two windows of 64 tokens
    tab.question_edit.setText(QUESTION)
    _answer(qtbot, tab)
    assert not tab.passage_view.has_shading()
    with qtbot.waitSignal(tab.controller.runner.result, timeout=TIMEOUT_MS) as blocker:
        _click_check_box(qtbot, tab.shade_check)
    shading = blocker.args[0].probabilities
    assert shading.num_windows == 2 and "2 windows" in tab.passage_info.text()
    assert tab.passage_view.has_shading()
    positions = QtTextPositions(PASSAGE * 2)
    for (start, end), start_probability, end_probability in zip(
        shading.spans, shading.start_probabilities, shading.end_probabilities
    ):
        for position in range(positions.to_qt(start), positions.to_qt(end)):
            assert tab.passage_view.token_probabilities_at(position) == (
                start_probability,
                end_probability,
            )
    # The answer's highlight is the one selection; the shading is painted around it.
    selections = tab.passage_view.extraSelections()
    assert len(selections) == 1
    assert selections[0].cursor == tab.passage_view.answer_selection().cursor
    tab.passage_view.grab()  # paints the tints without error
    _click_check_box(qtbot, tab.shade_check)
    assert not tab.passage_view.has_shading()
    assert tab.passage_view.answer_selection() is not None


@pytest.mark.timing  # a bound on the window's heartbeat: run alone, not beside other passes
def test_a_long_passage_with_shading_stays_responsive_and_shows_each_answer(
    qtbot, open_tab, presets, monkeypatch
):
    tab = open_tab(presets["qa"])
    model = tab.context.models.model("BertQuestionAnswerer")
    _plant_answer(monkeypatch, model, "alice", "rome")
    passage = "the cat sat on the mat near the old house . " * 2250
    passage += "Alice is the king of Rome . " + "the dog ran under the blue tree . " * 3
    assert len(passage) > 99_000
    tab.passage_view.set_passage(passage)
    tab.question_edit.setText(QUESTION)
    tab.shade_check.setChecked(True)
    # The user clicked into the passage (to paste it), then asked.
    tab.passage_view.setFocus()
    with qtbot.waitSignal(tab.controller.runner.result, timeout=TIMEOUT_MS) as blocker:
        tab.answer_now()
    report = blocker.args[0]
    best = report.result.answers[0]
    assert best.text == "Alice is the king of Rome"
    assert tab.passage_view.has_shading() and report.shading.num_windows > 300
    _assert_highlights(tab, best)
    assert tab.passage_view.is_in_view(best.start, best.end)

    # Selecting each n-best row highlights it and shows it; the window never stalls.
    heartbeat = Heartbeat()
    heartbeat.start()
    for row in (3, 1, 4, 2, 0):
        rectangle = tab.answers_view.visualRect(tab.answers_model.index(row, 0))
        qtbot.mouseClick(
            tab.answers_view.viewport(), Qt.MouseButton.LeftButton, pos=rectangle.center()
        )
        qtbot.wait(60)
        answer = report.result.answers[row]
        _assert_highlights(tab, answer)
        assert tab.passage_view.is_in_view(answer.start, answer.end)
    heartbeat.stop()
    assert heartbeat.max_gap_ms < 1500  # generous: 13.6 s a click before


def test_a_stale_missing_input_message_goes_once_the_input_is_there(qtbot, open_tab, presets):
    tab = open_tab(presets["qa"])
    tab.question_edit.setText(QUESTION)
    tab.answer_now()
    assert tab.error_banner.message == "Paste a passage or open a text file first."
    tab.passage_view.set_passage(PASSAGE)
    assert tab.error_banner.message == ""
    with qtbot.waitSignal(tab.controller.runner.result, timeout=TIMEOUT_MS):
        tab.answer_now()
        assert tab.busy_label.isVisibleTo(tab) and tab.error_banner.message == ""
    tab.question_edit.clear()
    tab.answer_now()
    assert tab.error_banner.message == "Type a question first."
    tab.question_edit.setText(QUESTION)
    assert tab.error_banner.message == ""


def test_the_answers_export_as_csv_and_json(qtbot, open_tab, presets, tmp_path):
    tab = open_tab(presets["qa"])
    csv_action, json_action = tab.export_actions()
    assert not csv_action.available() and not json_action.available()
    tab.passage_view.set_passage(PASSAGE)
    tab.question_edit.setText(QUESTION)
    tab.top_k_spin.setValue(3)
    report = _answer(qtbot, tab)
    assert csv_action.available() and csv_action.label == "Answers as CSV…"
    csv_action.write(csv_action.path_for(tmp_path / "answers"))
    json_action.write(json_action.path_for(tmp_path / "answers"))
    with open(tmp_path / "answers.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    shown = tab.answers_model
    assert len(rows) == shown.rowCount() == 3
    document = json.loads((tmp_path / "answers.json").read_text(encoding="utf-8"))
    assert document["question"] == QUESTION and document["no_answer"] is False
    assert document["model"] == presets["qa"]
    for row, exported, answer in zip(range(3), rows, document["answers"]):
        expected = shown.answer_at(row)
        assert exported["answer"] == answer["answer"] == expected.text
        assert PASSAGE[int(exported["start"]) : int(exported["end"])] == expected.text
        assert float(exported["score"]) == pytest.approx(expected.score)
        assert answer["probability"] == pytest.approx(expected.probability)
        # What the table shows, cell by cell.
        assert shown.data(shown.index(row, 2)) == probability_text(float(exported["probability"]))
        assert shown.data(shown.index(row, 4)) == exported["window"] == str(answer["window"])
    assert report.result.answers == shown.answers()


def test_an_untrained_qa_head_is_flagged_and_the_tab_follows_the_model(qtbot, open_tab, presets):
    tab = open_tab(presets["backbone"])
    # Showing the tab loads the model in the background and checks its head.
    qtbot.waitUntil(lambda: tab.head_warning.isVisible(), timeout=TIMEOUT_MS)
    assert "no trained QA head" in tab.head_warning.text()
    assert "answers are random" in tab.head_warning.text()
    with qtbot.waitSignal(tab.context.tab_requested) as blocker:
        tab.head_warning.linkActivated.emit("fine-tune:qa")
    assert blocker.args == [TabKey.FINE_TUNING]

    tab.passage_view.set_passage(PASSAGE)
    tab.question_edit.setText(QUESTION)
    report = _answer(qtbot, tab)
    assert report.freshly_initialized_heads == ("span_head",)
    _assert_highlights(tab, report.result.answers[0])

    # Another model: results and warning go; its own check follows.
    tab.context.models.set_source(presets["qa"])
    assert tab.head_warning.isHidden() and tab.answers_view.model().rowCount() == 0
    assert tab.passage_view.answer_selection() is None
    report = _answer(qtbot, tab)
    assert report.request.source == presets["qa"] and report.freshly_initialized_heads == ()
    assert tab.head_warning.isHidden()


def test_opening_passage_files(qtbot, open_tab, presets, tmp_path):
    tab = open_tab(presets["qa"])
    good = tmp_path / "passage.txt"
    good.write_bytes("\ufeffAlice 😀 is the king .\r\nBob is the chef .\r\n".encode("utf-8"))
    assert tab.load_passage_file(good)
    assert tab.passage_view.passage() == "Alice 😀 is the king .\nBob is the chef .\n"
    assert tab.error_banner.message == ""
    assert tab.passage_info.text() == "40 characters"  # the emoji is one

    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Crème brûlée".encode("latin-1"))
    assert not tab.load_passage_file(latin1)
    assert tab.error_banner.message == (
        "Cannot open latin1.txt: it is not UTF-8 text (byte 0xe8 at offset 2). Save it as "
        "UTF-8 and open it again."
    )
    assert tab.passage_view.passage().startswith("Alice")  # unchanged
    assert not tab.load_passage_file(tmp_path / "missing.txt")
    assert tab.error_banner.message == "Cannot open missing.txt: No such file or directory."
    assert not tab.load_passage_file(tmp_path)
    assert tab.error_banner.message.startswith(f"Refusing to read {str(tmp_path)!r}: it is a folder")
    if hasattr(os, "mkfifo"):
        # A named pipe with no writer would block the window for ever: refused unread.
        os.mkfifo(tmp_path / "pipe.txt")
        assert not tab.load_passage_file(tmp_path / "pipe.txt")
        assert "it is a FIFO (named pipe)" in tab.error_banner.message
    assert tab.load_passage_file(good)
    assert tab.error_banner.message == ""


def test_answer_list_model(qtmodeltester):
    model = AnswerListModel()
    answers = [
        AnswerSpan("Alice 😀", 10, 17, 3.25, 0.5, 0.7, 0.6, 0),
        AnswerSpan("the\nking", 30, 38, 1.0, 0.125, 0.2, 0.3, 1),
    ]
    model.set_answers(answers)
    qtmodeltester.check(model)
    assert model.rowCount() == 2 and model.columnCount() == 5
    row = [model.data(model.index(1, column)) for column in range(5)]
    assert row == ["the king", "1.00", "12.5 %", "30–38", "2"]
    assert model.data(model.index(0, 0), AnswerRole) is answers[0]
    assert model.headerData(0, Qt.Orientation.Horizontal) == "Answer"
    # A span probability under 0.1 % keeps its digits (scientific), in the tooltip too.
    tiny = AnswerSpan("Alice", 10, 15, -9.0, 1.48e-9, 2.0e-5, 3.1e-4, 0)
    model.set_answers([tiny])
    assert model.data(model.index(0, 2)) == "1.5e-09"
    assert "1.5e-09 (start 2.0e-05, end 3.1e-04)" in model.data(
        model.index(0, 0), Qt.ItemDataRole.ToolTipRole
    )
    model.clear()
    assert model.rowCount() == 0
    qtmodeltester.check(model)


def test_qt_text_positions_count_utf16_units():
    text = "a😀é👩‍🔬b"
    positions = QtTextPositions(text)
    for index in range(len(text) + 1):
        qt_position = len(text[:index].encode("utf-16-le")) // 2
        assert positions.to_qt(index) == qt_position
        assert positions.from_qt(qt_position) == index
    plain = QtTextPositions("naïve")
    assert [plain.to_qt(index) for index in range(6)] == list(range(6))
