"""`span_probabilities`: per-token start/end probabilities over `answer`'s windows."""

import numpy as np
import pytest

from inference_helpers import make_tokenizer
from inference_helpers import plant_logits
from inference_helpers import shared_backbone
from kbert.data.qa_windows import make_qa_windows
from kbert.data.question_windowing import QuestionWindowing
from kbert.inference import span_probabilities
from kbert.models import BertQuestionAnswerer

FILLER = "The cat sat on the mat and the dog ran . "


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return make_tokenizer(tmp_path_factory.mktemp("span_probabilities"))


@pytest.fixture(scope="module")
def model(tokenizer):
    model = BertQuestionAnswerer(shared_backbone())
    model.tokenizer = tokenizer
    return model


def test_one_window_matches_the_answers_probabilities(model, tokenizer):
    question, context = "Who sat?", "  Café 😀 naïve: the cat sat on the mat, paris!"
    shading = span_probabilities(model, None, question, context)
    result = model.answer(question, context, top_k=5)
    assert (shading.question, shading.context, shading.num_windows) == (question, context, 1)
    tokens = [context[start:end] for start, end in shading.spans]
    assert tokens == [
        "Café",
        "😀",
        "naïve",
        ":",
        "the",
        "cat",
        "sat",
        "on",
        "the",
        "mat",
        ",",
        "paris",
        "!",
    ]
    assert len(shading.start_probabilities) == len(shading.end_probabilities) == len(tokens)
    # Probabilities over every real token of the window ([CLS] and the question too).
    assert 0 < sum(shading.start_probabilities) < 1 and 0 < sum(shading.end_probabilities) < 1
    starts = {start: index for index, (start, _) in enumerate(shading.spans)}
    ends = {end: index for index, (_, end) in enumerate(shading.spans)}
    for answer in result.answers:
        assert shading.start_probabilities[starts[answer.start]] == pytest.approx(
            answer.start_probability, rel=1e-5
        )
        assert shading.end_probabilities[ends[answer.end]] == pytest.approx(
            answer.end_probability, rel=1e-5
        )


def test_overlapping_windows_keep_each_tokens_largest_probability(model, tokenizer, monkeypatch):
    paris = tokenizer.token_to_id("paris")

    def prefer_paris(inputs):
        bonus = np.where(inputs["token_ids"] == paris, 30.0, 0.0).astype("float32")
        return {"start_logits": bonus, "end_logits": -bonus}

    plant_logits(monkeypatch, model, prefer_paris)
    question, context = "Where?", FILLER * 3 + "Paris " + FILLER * 3
    windowing = QuestionWindowing(max_length=24, doc_stride=5)
    shading = span_probabilities(model, tokenizer, question, context, windowing=windowing)
    windows = make_qa_windows(tokenizer, question, context, windowing)
    assert shading.num_windows == len(windows) > 3
    assert len(shading.spans) == windows[0].num_context_tokens
    (paris_index,) = [i for i, (s, e) in enumerate(shading.spans) if context[s:e] == "Paris"]
    # Every window holding "Paris" gives it nearly all its start mass, none of its end mass.
    assert shading.start_probabilities[paris_index] > 0.99
    assert shading.end_probabilities[paris_index] < 1e-6
    # Other tokens are only likely in windows without "Paris".
    assert max(np.delete(shading.start_probabilities, paris_index)) < 0.5
    # A token's value is the largest over the windows holding it: never below any window's.
    for window in windows:
        outputs = model.predict_on_batch(tokenizer.pad([window], sequence_length=32))
        logits = outputs["end_logits"][0, : len(window)]
        probabilities = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
        tokens = range(window.context_token_start, window.context_token_end)
        for token, probability in zip(tokens, probabilities[window.context_mask]):
            assert shading.end_probabilities[token] >= probability * (1 - 1e-4)


def test_a_context_without_tokens_needs_no_model(model, monkeypatch):
    monkeypatch.setattr(model, "predict_on_batch", lambda inputs: pytest.fail("model ran"))
    shading = span_probabilities(model, None, "Who?", " \n\u200b ")
    assert (shading.spans, shading.start_probabilities, shading.num_windows) == ((), (), 0)


def test_bad_input(model):
    with pytest.raises(ValueError, match="`question` must contain at least one token"):
        span_probabilities(model, None, "", FILLER)
    with pytest.raises(ValueError, match="`doc_stride` must be an integer >= 1"):
        span_probabilities(model, None, "Who?", FILLER, windowing=QuestionWindowing(doc_stride=0))
    with pytest.raises(ValueError, match="`batch_size` must be a positive integer"):
        span_probabilities(model, None, "Who?", FILLER, batch_size=0)
