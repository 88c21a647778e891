"""`answer` on several questions: lists, records, DataFrames and datasets, batched together."""

import numpy as np
import pytest

from inference_helpers import count_predictions
from inference_helpers import make_tokenizer
from inference_helpers import shared_backbone
from kbert.models import BertQuestionAnswerer

QUESTIONS = ["Who sat?", "Where did the dog run?", "What did the cat do on the mat?"]
CONTEXTS = [
    "The cat sat on the mat.",
    "The dog ran to the park and the cat sat on the mat . " * 4,
    "The cat sat on the mat and the dog ran .",
]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    model = BertQuestionAnswerer(shared_backbone())
    model.tokenizer = make_tokenizer(tmp_path_factory.mktemp("qa-lists"))
    return model


def _same(result, reference):
    assert reference.answers, "the reference has no answer: nothing would be compared"
    assert result.question == reference.question and result.context == reference.context
    assert [(a.text, a.start, a.end) for a in result.answers] == [
        (a.text, a.start, a.end) for a in reference.answers
    ]
    np.testing.assert_allclose(
        [a.probability for a in result.answers],
        [a.probability for a in reference.answers],
        rtol=1e-4,
        atol=1e-7,
    )
    assert result.no_answer_score == pytest.approx(reference.no_answer_score, abs=1e-4)


@pytest.fixture(scope="module")
def one_by_one(model):
    return [model.answer(q, c, top_k=3) for q, c in zip(QUESTIONS, CONTEXTS)]


def test_a_list_of_questions_equals_one_call_per_question(model, one_by_one):
    results = model.answer(QUESTIONS, CONTEXTS, top_k=3)
    assert isinstance(results, list) and len(results) == len(QUESTIONS) == len(one_by_one)
    for result, reference in zip(results, one_by_one, strict=True):
        _same(result, reference)


def test_one_context_serves_every_question(model):
    results = model.answer(QUESTIONS, CONTEXTS[2])
    for question, result in zip(QUESTIONS, results, strict=True):
        _same(result, model.answer(question, CONTEXTS[2]))


def test_tables_give_the_same_answers(model, one_by_one):
    pandas = pytest.importorskip("pandas")
    datasets = pytest.importorskip("datasets")
    records = [{"question": q, "context": c, "id": str(i)} for i, (q, c) in
               enumerate(zip(QUESTIONS, CONTEXTS))]
    frame = pandas.DataFrame(records)
    dataset = datasets.Dataset.from_list(records)
    for table in (records, frame, dataset):
        for result, reference in zip(model.answer(table, top_k=3), one_by_one, strict=True):
            _same(result, reference)


def test_the_windows_of_every_question_are_batched_together(model, monkeypatch):
    shapes = count_predictions(monkeypatch, model)
    model.answer(QUESTIONS[:1] * 3 + QUESTIONS[2:], [CONTEXTS[0]] * 3 + CONTEXTS[2:])
    # Four short questions, one window each: one forward pass, not four.
    assert len(shapes) == 1 and shapes[0][0] == 4


def test_wrong_shapes_are_one_sentence(model):
    cases = [
        ((QUESTIONS, CONTEXTS[:2]), "`context` must be one string, or a list as long as"),
        ((QUESTIONS[0], CONTEXTS), "`context` must be one string, or a list as long as"),
        (([{"question": "Who?"}],), "'context'"),
        (([{"question": "Who?", "context": "x"}], "x"), "not both"),
    ]
    for arguments, message in cases:
        with pytest.raises(ValueError, match=message) as raised:
            model.answer(*arguments)
        assert "\n" not in str(raised.value)
