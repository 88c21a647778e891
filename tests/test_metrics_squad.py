"""kbert.metrics.squad_scores against a plain re-statement of the official SQuAD v2.0 script.

transformers 5 no longer ships its port of the official script (`transformers.data.metrics`),
so the reference below restates the script's definitions loop by loop (Python sums and dict
orders included), written independently of kbert's numpy version.
"""

import collections
import logging
import re
import string

import numpy as np
import pytest

from kbert.metrics import normalize_answer, squad_scores


def _reference_normalize(text):
    text = text.lower()
    text = "".join(character for character in text if character not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def _reference_exact(gold, prediction):
    return int(_reference_normalize(gold) == _reference_normalize(prediction))


def _reference_f1(gold, prediction):
    gold_tokens = _reference_normalize(gold).split() if gold else []
    predicted_tokens = _reference_normalize(prediction).split() if prediction else []
    common = collections.Counter(gold_tokens) & collections.Counter(predicted_tokens)
    num_same = sum(common.values())
    if len(gold_tokens) == 0 or len(predicted_tokens) == 0:
        return int(gold_tokens == predicted_tokens)
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(predicted_tokens)
    recall = 1.0 * num_same / len(gold_tokens)
    return (2 * precision * recall) / (precision + recall)


def _reference_best_thresh(predictions, scores, probabilities, has_answer):
    current = sum(1 for key in has_answer if not has_answer[key])
    best_score, best_threshold = current, 0.0
    for question_id in sorted(probabilities, key=lambda key: probabilities[key]):
        if question_id not in scores:
            continue
        if has_answer[question_id]:
            difference = scores[question_id]
        else:
            difference = -1 if predictions[question_id] else 0
        current += difference
        if current > best_score:
            best_score, best_threshold = current, probabilities[question_id]
    return 100.0 * best_score / len(scores), best_threshold


def _reference_scores(predictions, answers, probabilities=None, threshold=1.0):
    """The official script's main() on a flat {id: [gold texts]} dataset, all ids predicted."""
    has_answer = {key: bool(golds) for key, golds in answers.items()}
    exact_raw, f1_raw = {}, {}
    for key, golds in answers.items():
        golds = [text for text in golds if _reference_normalize(text)] or [""]
        exact_raw[key] = max(_reference_exact(gold, predictions[key]) for gold in golds)
        f1_raw[key] = max(_reference_f1(gold, predictions[key]) for gold in golds)
    null_probabilities = probabilities if probabilities is not None else {key: 0.0 for key in predictions}

    def thresholded(scores):
        return {
            key: float(not has_answer[key]) if null_probabilities[key] > threshold else score
            for key, score in scores.items()
        }

    exact, f1 = thresholded(exact_raw), thresholded(f1_raw)

    def evaluation(keys):
        return {
            "exact": 100.0 * sum(exact[key] for key in keys) / len(keys),
            "f1": 100.0 * sum(f1[key] for key in keys) / len(keys),
            "total": len(keys),
        }

    result = evaluation(list(exact))
    result = {"exact_match": result["exact"], "f1": result["f1"], "total": result["total"]}
    for prefix, wanted in (("HasAns", True), ("NoAns", False)):
        keys = [key for key in has_answer if has_answer[key] == wanted]
        if keys:
            result.update({f"{prefix}_{name}": value for name, value in evaluation(keys).items()})
    if probabilities is not None:
        result["best_exact"], result["best_exact_thresh"] = _reference_best_thresh(
            predictions, exact_raw, probabilities, has_answer
        )
        result["best_f1"], result["best_f1_thresh"] = _reference_best_thresh(
            predictions, f1_raw, probabilities, has_answer
        )
    return result


def test_hand_checked_scores():
    scores = squad_scores(
        {"q1": "The Eiffel Tower!", "q2": "in Paris France", "q3": "", "q4": "something"},
        {"q1": ["Eiffel Tower"], "q2": ["Paris", "Paris, France"], "q3": [], "q4": []},
    )
    # Exact: q1 (article and punctuation dropped) and q3; q2 has an extra word; q4 answers
    # an unanswerable question.
    assert scores["exact_match"] == 50.0
    # q2: best F1 is against "Paris France": 2 of 3 predicted words, 2 of 2 gold -> 0.8.
    assert scores["f1"] == pytest.approx(100.0 * (1 + 0.8 + 1 + 0) / 4)
    assert (scores["HasAns_exact"], scores["HasAns_total"]) == (50.0, 2)
    assert (scores["NoAns_exact"], scores["NoAns_total"]) == (50.0, 2)
    assert "best_f1" not in scores


def test_v1_data_has_no_noans_keys_and_lists_are_accepted():
    scores = squad_scores(["an apple", "pear"], [["Apple"], ["banana", "pear."]])
    assert scores["exact_match"] == 100.0 and scores["f1"] == 100.0 and scores["total"] == 2
    assert "NoAns_total" not in scores and scores["HasAns_total"] == 2


def test_best_threshold_hand_checked():
    answers = {"a": ["x"], "b": [], "c": ["y"]}
    predictions = {"a": "x", "b": "z", "c": "w"}
    probabilities = {"a": 0.1, "b": 0.6, "c": 0.9}
    scores = squad_scores(predictions, answers, no_answer_probabilities=probabilities)
    # Answer only "a" (threshold 0.1): a right, b and c null -> b right, c wrong.
    assert scores["best_exact"] == pytest.approx(200.0 / 3)
    assert scores["best_exact_thresh"] == 0.1
    thresholded = squad_scores(
        predictions, answers, no_answer_probabilities=probabilities, null_threshold=0.5
    )
    assert thresholded["exact_match"] == pytest.approx(200.0 / 3)


def test_missing_prediction_counts_as_empty_with_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="kbert.metrics.squad_metrics"):
        scores = squad_scores({"q1": "x"}, {"q1": ["x"], "q2": ["y"], "q3": []})
    assert "2 of 3 questions have no prediction" in caplog.text
    assert scores["exact_match"] == pytest.approx(200.0 / 3)


@pytest.mark.parametrize(
    "predictions, answers, kwargs, message",
    [
        ({}, {}, {}, "nothing to score"),
        ({"q": "x"}, {"q": "x"}, {}, "list of strings"),
        ({"q": 3}, {"q": ["x"]}, {}, "must be strings"),
        (["x", "y"], {"q": ["x"]}, {}, "one entry per question"),
        ({"q": "x"}, {"q": ["x"]}, {"no_answer_probabilities": {"r": 0.5}}, "lacks 1 question ids"),
        ("x", {"q": ["x"]}, {}, "dict or a list"),
    ],
)
def test_bad_inputs_raise(predictions, answers, kwargs, message):
    with pytest.raises(ValueError, match=message):
        squad_scores(predictions, answers, **kwargs)


_WORDS = [
    "the",
    "The",
    "THE",
    "a",
    "A",
    "an",
    "An",
    "cat",
    "Cat",
    "sat",
    "mat",
    "mat.",
    "on",
    "Paris",
    "paris,",
    "theory",
    "another",
    "an-",
    "'s",
    "co-op",
    "1990",
    "!",
    "--",
    "\u00e9t\u00e9",
    "\u2014",
    "(the)",
    "U.S.",
]
_SEPARATORS = [" ", " ", " ", "  ", "\t", "\n", ""]


def _random_text(rng, max_words=6):
    count = int(rng.integers(0, max_words + 1))
    pieces = []
    for _ in range(count):
        pieces += [str(rng.choice(_WORDS)), str(rng.choice(_SEPARATORS))]
    return "".join(pieces)


def test_normalize_answer_equals_reference():
    rng = np.random.default_rng(1)
    for _ in range(500):
        text = _random_text(rng, 10)
        assert normalize_answer(text) == _reference_normalize(text), repr(text)


def test_randomised_cases_equal_official_definitions():
    rng = np.random.default_rng(2)
    largest_difference = 0.0
    questions_compared = 0
    for case in range(300):
        num_questions = int(rng.integers(1, 12))
        answers, predictions, probabilities = {}, {}, {}
        for index in range(num_questions):
            question_id = f"q{case}_{index}"
            unanswerable = rng.random() < 0.3
            answers[question_id] = (
                [] if unanswerable else [_random_text(rng) for _ in range(int(rng.integers(1, 4)))]
            )
            predictions[question_id] = "" if rng.random() < 0.2 else _random_text(rng)
            # A few distinct values, so ties in the threshold search are common.
            probabilities[question_id] = float(rng.choice([0.0, 0.2, 0.5, 0.5, 0.8, 1.0]))
        # The probabilities file's order decides ties; make it differ from the answers order.
        shuffled = list(probabilities)
        rng.shuffle(shuffled)
        probabilities = {key: probabilities[key] for key in shuffled}
        with_probabilities = case % 2 == 0
        threshold = float(rng.choice([1.0, 0.5]))
        kwargs = {"no_answer_probabilities": probabilities} if with_probabilities else {}
        ours = squad_scores(predictions, answers, null_threshold=threshold, **kwargs)
        theirs = _reference_scores(
            predictions, answers, probabilities if with_probabilities else None, threshold
        )
        assert set(ours) == set(theirs)
        for key, value in theirs.items():
            largest_difference = max(largest_difference, abs(ours[key] - value))
        questions_compared += num_questions
    assert questions_compared >= 300
    assert largest_difference <= 1e-12
