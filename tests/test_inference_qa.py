"""`BertQuestionAnswerer.answer`: exact substrings, windows, no-answer, bad input."""

import itertools

import numpy as np
import pytest

from inference_helpers import count_predictions
from inference_helpers import shared_backbone
from inference_helpers import make_tokenizer
from inference_helpers import plant_logits
from inference_helpers import random_text
from kbert import inference
from kbert.data.qa_windows import char_span_to_token_span
from kbert.data.qa_windows import make_qa_windows
from kbert.data.question_windowing import QuestionWindowing
from kbert.models import BertQuestionAnswerer

FILLER = "The cat sat on the mat and the dog ran . "


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return make_tokenizer(tmp_path_factory.mktemp("qa"))


@pytest.fixture(scope="module")
def model(tokenizer):
    model = BertQuestionAnswerer(shared_backbone())
    model.tokenizer = tokenizer
    return model


def _plant_tokens(monkeypatch, model, tokenizer, start_token, end_token, size=100.0):
    """Start logits peak on `start_token`, end logits on `end_token`, wherever they are."""
    start_id, end_id = tokenizer.token_to_id(start_token), tokenizer.token_to_id(end_token)

    def bonus(inputs):
        token_ids = inputs["token_ids"]
        return {
            "start_logits": np.where(token_ids == start_id, size, 0.0).astype("float32"),
            "end_logits": np.where(token_ids == end_id, size, 0.0).astype("float32"),
        }

    plant_logits(monkeypatch, model, bonus)


def test_every_answer_is_an_exact_substring_of_the_context(model, tokenizer):
    rng = np.random.default_rng(7)
    settings = itertools.cycle([(32, 4, 30), (24, 10, 3), (32, 128, 1), (20, 3, 5)])
    checked = 0
    for _ in range(16):
        max_length, doc_stride, max_answer_length = next(settings)
        question = random_text(rng, int(rng.integers(1, 4))) + " who?"
        context = random_text(rng, int(rng.integers(0, 60)))
        windowing = QuestionWindowing(max_length=max_length, doc_stride=doc_stride)
        result = model.answer(
            question,
            context,
            top_k=5,
            max_answer_length=max_answer_length,
            windowing=windowing,
        )
        assert (result.question, result.context) == (question, context)
        windows = make_qa_windows(tokenizer, question, context, windowing)
        if not windows:
            assert result.is_impossible and result.answers == ()
            continue
        assert not result.is_impossible and 1 <= len(result.answers) <= 5
        scores = [answer.score for answer in result.answers]
        assert scores == sorted(scores, reverse=True)
        assert len({(answer.start, answer.end) for answer in result.answers}) == len(scores)
        assert sum(answer.probability for answer in result.answers) <= 1 + 1e-5
        for answer in result.answers:
            assert context[answer.start : answer.end] == answer.text != ""
            assert 0 < answer.probability <= 1
            assert 0 < answer.start_probability <= 1 and 0 < answer.end_probability <= 1
            start, end = char_span_to_token_span(windows[answer.window], answer.start, answer.end)
            assert 0 < start <= end < start + max_answer_length
            checked += 1
    assert checked > 30


def test_the_best_span_is_the_brute_force_best(model, tokenizer):
    question, context = "Who sat?", "The cat sat on the mat and the dog ran to Paris."
    result = model.answer(question, context, top_k=3, max_answer_length=4)
    (window,) = make_qa_windows(tokenizer, question, context)
    outputs = model.predict_on_batch(tokenizer.pad([window], sequence_length=32))
    start_logits, end_logits = outputs["start_logits"][0], outputs["end_logits"][0]
    context_tokens = np.flatnonzero(window.context_mask)
    spans = sorted(
        (
            (start_logits[i] + end_logits[j], i, j)
            for i in context_tokens
            for j in context_tokens
            if i <= j < i + 4
        ),
        reverse=True,
    )
    for answer, (score, i, j) in zip(result.answers, spans):
        assert answer.score == pytest.approx(float(score), abs=1e-4)
        assert (answer.start, answer.end) == (window.offsets[i, 0], window.offsets[j, 1])
    # Probabilities: a softmax over every valid span.
    all_scores = np.array([score for score, _, _ in spans], dtype="float64")
    expected = (
        np.exp(all_scores[0] - all_scores.max()) / np.exp(all_scores - all_scores.max()).sum()
    )
    assert result.answers[0].probability == pytest.approx(expected, abs=1e-4)


def test_a_planted_answer_beyond_the_first_window_is_found(model, tokenizer, monkeypatch):
    _plant_tokens(monkeypatch, model, tokenizer, "paris", "france")
    question = "Where did the cat run?"
    context = FILLER * 6 + "  PARIS  ,   France  " + FILLER * 3
    for doc_stride in (4, 9, 128):
        windowing = QuestionWindowing(max_length=32, doc_stride=doc_stride)
        result = model.answer(question, context, top_k=3, windowing=windowing)
        best = result.answers[0]
        assert best.text == "PARIS  ,   France"
        assert best.start == context.index("PARIS") and best.end == context.index("France") + 6
        assert best.probability > 0.99
        windows = make_qa_windows(tokenizer, question, context, windowing)
        assert len(windows) > 4 and best.window > 0
        start, end = char_span_to_token_span(windows[best.window], best.start, best.end)
        assert windows[best.window].max_context[start]
        # Overlapping windows propose each span once.
        assert len({(answer.start, answer.end) for answer in result.answers}) == 3


def test_answers_start_and_end_on_word_boundaries(model, tokenizer, monkeypatch):
    # The start logits peak on "##aff", a piece inside "unaffable"; the end on "naive".
    _plant_tokens(monkeypatch, model, tokenizer, "##aff", "naive")
    context = "the cat is unaffable and naive . the dog ran to paris ."
    question = "who sat?"
    assert tokenizer.tokenize("unaffable") == ["un", "##aff", "##able"]
    result = model.answer(question, context, top_k=8)
    best = result.answers[0]
    assert best.text == "unaffable and naive"
    assert (best.start, best.end) == (11, 30) and context[best.start : best.end] == best.text
    # Every n-best span begins and ends between words, and none repeats.
    for answer in result.answers:
        assert answer.start == 0 or not context[answer.start - 1].isalnum()
        assert answer.end == len(context) or not context[answer.end].isalnum()
    assert len({(answer.start, answer.end) for answer in result.answers}) == 8
    # A span that ends inside a word ends after it: "un" alone is never an answer.
    assert all(answer.text not in ("un", "unaff") for answer in result.answers)


def test_spans_longer_than_max_answer_length_are_not_answers(model, tokenizer, monkeypatch):
    _plant_tokens(monkeypatch, model, tokenizer, "paris", "france")
    context = "paris " + "the cat sat " * 3 + "france"
    result = model.answer("Where?", context, top_k=5, max_answer_length=5)
    for answer in result.answers:
        assert answer.text not in (context, context.strip())
        assert len(tokenizer.tokenize(answer.text)) <= 5
    longer = model.answer("Where?", context, max_answer_length=30)
    assert longer.answers[0].text == context


def test_no_answer_under_a_null_threshold(model, tokenizer, monkeypatch):
    def prefer_cls(inputs):
        shape = inputs["token_ids"].shape
        bonus = np.zeros(shape, "float32")
        bonus[:, 0] = 50.0
        return {"start_logits": bonus, "end_logits": bonus}

    plant_logits(monkeypatch, model, prefer_cls)
    question, context = "Who sat?", FILLER * 4
    always = model.answer(question, context)
    assert not always.is_impossible and len(always.answers) == 1
    assert always.no_answer_score > 90
    gap = always.no_answer_score - always.answers[0].score
    impossible = model.answer(question, context, null_threshold=gap - 1.0)
    assert impossible.is_impossible and impossible.answers == ()
    assert impossible.no_answer_score == pytest.approx(always.no_answer_score)
    assert not model.answer(question, context, null_threshold=gap + 1.0).is_impossible


def test_an_empty_context_is_no_answer_without_running_the_model(model, monkeypatch):
    calls = count_predictions(monkeypatch, model)
    for context in ("", "   \n", "\u200b"):
        result = model.answer("Who sat?", context)
        assert result.is_impossible and result.answers == () and result.no_answer_score is None
    assert calls == []


def test_all_windows_of_a_call_run_as_one_batch(model, tokenizer, monkeypatch):
    calls = count_predictions(monkeypatch, model)
    context = FILLER * 5
    windows = make_qa_windows(
        tokenizer, "Who?", context, QuestionWindowing(max_length=32, doc_stride=8)
    )
    model.answer("Who?", context, windowing=QuestionWindowing(doc_stride=8))
    assert calls == [(8, 32)] and 4 < len(windows) <= 8
    calls.clear()
    model.answer("Who?", context, windowing=QuestionWindowing(doc_stride=8), batch_size=2)
    # Rows are padded to a power of two: the fifth window runs alone.
    assert len(windows) == 5 and calls == [(2, 32), (2, 32), (1, 32)]


def test_bad_input(model, tokenizer):
    with pytest.raises(ValueError, match=r"The question has \d+ tokens.*max_length=32"):
        model.answer("who sat on the mat " * 6, FILLER)
    for arguments, message in [
        (dict(top_k=0), "`top_k` must be a positive integer"),
        (dict(max_answer_length=0), "`max_answer_length` must be a positive integer"),
        (dict(null_threshold="high"), "`null_threshold` must be None or a number"),
        (dict(question=""), "`question` must contain at least one token"),
        (dict(context=None), "`context` must be a string"),
    ]:
        with pytest.raises(ValueError, match=message):
            model.answer(**(dict(question="Who?", context=FILLER) | arguments))
    bare = BertQuestionAnswerer(model.backbone)
    with pytest.raises(ValueError, match="BertQuestionAnswerer has no tokenizer"):
        bare.answer("Who?", FILLER)
    assert inference.answer(bare, tokenizer, "Who?", FILLER).answers
