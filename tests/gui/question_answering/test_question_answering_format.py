"""The question-answering tab's lines, from kbert's answers (no Qt)."""

from kbert.inference import AnswerSpan
from kbert.inference import AnswerResult

from kbert_gui.question_answering.question_answering_format import THRESHOLD_LIMIT
from kbert_gui.question_answering.question_answering_format import THRESHOLD_STEPS_PER_UNIT
from kbert_gui.question_answering.question_answering_format import answer_details
from kbert_gui.question_answering.question_answering_format import fresh_heads_tooltip
from kbert_gui.question_answering.question_answering_format import no_answer_comparison
from kbert_gui.question_answering.question_answering_format import no_answer_details
from kbert_gui.question_answering.question_answering_format import passage_info
from kbert_gui.question_answering.question_answering_format import quoted_answer
from kbert_gui.question_answering.question_answering_format import shading_legend
from kbert_gui.question_answering.question_answering_format import slider_threshold
from kbert_gui.question_answering.question_answering_format import threshold_text

BEST = AnswerSpan("the king\nof  Rome", 40, 57, 3.254, 0.1234, 0.5, 0.6, 1)
QUESTION = "who is the king of Rome ?"


def _result(answers, no_answer_score, is_impossible=False):
    return AnswerResult(QUESTION, "…", tuple(answers), no_answer_score, is_impossible)


def test_the_slider_in_tenths():
    assert slider_threshold(-200) == -20.0 and slider_threshold(15) == 1.5
    assert threshold_text(0) == "+0.0"
    # The slider's ends.
    assert threshold_text(-THRESHOLD_LIMIT * THRESHOLD_STEPS_PER_UNIT) == "-20.0"
    assert threshold_text(THRESHOLD_LIMIT * THRESHOLD_STEPS_PER_UNIT) == "+20.0"


def test_the_best_answer_and_its_details():
    assert quoted_answer(BEST.text) == "“the king of Rome”"
    assert answer_details(BEST) == (
        "score 3.25 · probability 12.3 % · characters 40–57 · window 2"
    )
    assert no_answer_details(_result((), None, is_impossible=True)) == (
        "The passage has no words to answer from."
    )
    assert no_answer_details(_result((), 4.0, is_impossible=True)) == (
        "The model finds no answer to this question in the passage."
    )


def test_the_no_answer_score_against_the_best_span():
    # A model without a no-answer score (an empty passage): no comparison.
    assert no_answer_comparison(_result((), None, is_impossible=True), None, None) is None
    assert no_answer_comparison(_result([BEST], 1.0), None, None) == (
        "No-answer score 1.00 vs best span 3.25."
    )
    assert no_answer_comparison(_result([BEST], 1.0), None, 0.5) == (
        "No-answer score 1.00 vs best span 3.25: the difference -2.25 is within the null "
        "threshold +0.5."
    )
    assert no_answer_comparison(_result((), 1.0, is_impossible=True), BEST, -20.0) == (
        "No-answer score 1.00 vs best span 3.25 (“the king of Rome”): the difference -2.25 "
        "is above the null threshold -20.0."
    )


def test_passage_lines_and_the_head_warning():
    assert passage_info(0) == "" and passage_info(0, "2 windows") == ""
    assert passage_info(12345) == "12,345 characters"
    assert shading_legend(1) == (
        '1 window · shading: <span style="color:#1e88e5">■</span> start '
        '<span style="color:#e53935">■</span> end'
    )
    assert passage_info(40, shading_legend(2)).startswith("40 characters · 2 windows · shading: ")
    assert fresh_heads_tooltip(("span_head",)) == "Freshly initialised: span_head"
