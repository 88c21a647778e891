"""SQuAD exact match and F1, with the official v1.1/v2.0 answer normalisation.

The definitions follow the official SQuAD v2.0 evaluation script (which gives the v1.1
results on v1.1 data): answers are lower-cased, stripped of ASCII punctuation and of the
articles "a", "an", "the", and whitespace-collapsed; F1 is over the multiset of the
remaining words; each question scores the maximum over its gold answers; an unanswerable
question has the single gold answer "". With no-answer probabilities, the best null
threshold is searched as the script's `find_best_thresh` does.
"""

import collections
import logging
import re
import string

import numpy as np

__all__ = ["normalize_answer", "squad_scores"]

logger = logging.getLogger(__name__)

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION_TABLE = str.maketrans("", "", string.punctuation)


def normalize_answer(text):
    """The official SQuAD normalisation of an answer string.

    Args:
        text: an answer.

    Returns:
        `text` lower-cased, without ASCII punctuation or the articles a/an/the, and with
        runs of whitespace replaced by single spaces (none at either end).

    Examples:
    >>> normalize_answer("  The  Eiffel-Tower, in PARIS!")
    'eiffeltower in paris'
    """
    without_articles = _ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION_TABLE))
    return " ".join(without_articles.split())


def _exact_and_f1(gold_answer, predicted_answer):
    """Exact match (0/1) and token F1 of one prediction against one gold answer."""
    gold_tokens = normalize_answer(gold_answer).split()
    predicted_tokens = normalize_answer(predicted_answer).split()
    exact = float(gold_tokens == predicted_tokens)
    if not gold_tokens or not predicted_tokens:
        # A no-answer only matches a no-answer.
        return exact, exact
    num_same = sum((collections.Counter(gold_tokens) & collections.Counter(predicted_tokens)).values())
    if num_same == 0:
        return exact, 0.0
    precision = num_same / len(predicted_tokens)
    recall = num_same / len(gold_tokens)
    return exact, (2 * precision * recall) / (precision + recall)


def _as_mapping(values, name, question_ids=None):
    """`values` as a dict: dicts pass through; lists are keyed by position, or by the
    question ids in order when `question_ids` is given."""
    if isinstance(values, dict):
        return values
    if isinstance(values, (str, bytes)):
        raise ValueError(f"`{name}` must be a dict or a list. Received a string: {values[:50]!r}.")
    values = list(values)
    if question_ids is None:
        return dict(enumerate(values))
    if len(values) != len(question_ids):
        raise ValueError(
            f"`{name}` given as a list must have one entry per question of `answers`. Received "
            f"{len(values)} entries for {len(question_ids)} questions."
        )
    return dict(zip(question_ids, values))


def _gold_answer_lists(answers):
    """Validated gold answers per question id (from a dict); unanswerable questions get `[""]`."""
    gold = {}
    for question_id, texts in answers.items():
        if isinstance(texts, str) or not all(isinstance(text, str) for text in texts):
            raise ValueError(
                f"The gold answers of question {question_id!r} must be a list of strings. Received {texts!r}."
            )
        # As the official script: golds that normalise to "" are dropped; none left means no answer.
        gold[question_id] = [text for text in texts if normalize_answer(text)] or [""]
    return gold


def _best_threshold(raw_scores, predicted_empty, has_answer, probabilities, visit_order):
    """Best score (percent) over null thresholds and the threshold achieving it.

    Replays the official `find_best_thresh`: starting from "answer nothing", questions are
    switched to their prediction in increasing order of no-answer probability, ties kept in
    `visit_order`; the threshold is the probability at the first running maximum.
    """
    order = visit_order[np.argsort(probabilities[visit_order], kind="stable")]
    gains = np.where(has_answer, raw_scores, np.where(predicted_empty, 0.0, -1.0))[order]
    no_answer_count = float(np.count_nonzero(~has_answer))
    # cumsum adds in sequence, as the script's loop, so ties between sums resolve alike.
    running = np.cumsum(np.concatenate([[no_answer_count], gains]))[1:]
    if not len(running) or running.max() <= no_answer_count:
        return 100.0 * no_answer_count / len(raw_scores), 0.0
    best_index = int(np.argmax(running))
    return 100.0 * float(running[best_index]) / len(raw_scores), float(probabilities[order[best_index]])


def squad_scores(predictions, answers, no_answer_probabilities=None, null_threshold=1.0):
    """SQuAD v1.1/v2.0 exact match and F1 in percent, as the official evaluation script.

    Every question in `answers` is scored; a question without a prediction is scored as if
    the prediction were "" (a warning is logged), which is right for an unanswerable question
    and wrong for an answerable one. Predictions for questions not in `answers` are ignored.

    Args:
        predictions: dict from question id to the predicted answer text ("" for no answer),
            or a list of texts in the order of `answers`.
        answers: dict from question id to the list of gold answer texts (an empty list marks
            an unanswerable SQuAD 2.0 question), or a list of such lists.
        no_answer_probabilities: optional dict from question id to the model's probability
            that there is no answer (or a list in the order of `answers`). With it, questions
            whose probability exceeds `null_threshold` count as answered with "", and the best
            thresholds are searched.
        null_threshold: the probability above which a prediction is replaced by "no answer".

    Returns:
        dict with `"exact_match"`, `"f1"` (percent) and `"total"`; `"HasAns_exact"`,
        `"HasAns_f1"`, `"HasAns_total"` when some question has an answer; `"NoAns_exact"`,
        `"NoAns_f1"`, `"NoAns_total"` when some has none; and with `no_answer_probabilities`
        also `"best_exact"`, `"best_exact_thresh"`, `"best_f1"`, `"best_f1_thresh"`.

    Examples:
    >>> scores = squad_scores({"q1": "the Eiffel Tower", "q2": ""},
    ...                       {"q1": ["Eiffel Tower"], "q2": []})
    >>> scores["exact_match"], scores["NoAns_total"]
    (100.0, 1)
    """
    answer_lists = _as_mapping(answers, "answers")
    gold = _gold_answer_lists(answer_lists)
    if not gold:
        raise ValueError("`answers` is empty; there is nothing to score.")
    question_ids = list(gold)
    predicted_texts = _predicted_texts(predictions, question_ids)
    raw_exact, raw_f1 = _raw_scores(gold, question_ids, predicted_texts)
    # As the script: answerable means "has gold answers", even ones that normalise to "".
    has_answer = np.array([len(answer_lists[question_id]) > 0 for question_id in question_ids])
    probabilities, visit_order = _no_answer_probabilities(no_answer_probabilities, question_ids)
    predicted_null = probabilities > null_threshold
    exact = np.where(predicted_null, (~has_answer).astype(np.float64), raw_exact)
    f1 = np.where(predicted_null, (~has_answer).astype(np.float64), raw_f1)

    results = {"exact_match": _percent(exact), "f1": _percent(f1), "total": len(question_ids)}
    for prefix, selected in (("HasAns", has_answer), ("NoAns", ~has_answer)):
        if selected.any():
            results[f"{prefix}_exact"] = _percent(exact[selected])
            results[f"{prefix}_f1"] = _percent(f1[selected])
            results[f"{prefix}_total"] = int(np.count_nonzero(selected))
    if no_answer_probabilities is not None:
        predicted_empty = np.array([not text for text in predicted_texts])
        for name, raw in (("exact", raw_exact), ("f1", raw_f1)):
            best, threshold = _best_threshold(raw, predicted_empty, has_answer, probabilities, visit_order)
            results[f"best_{name}"] = best
            results[f"best_{name}_thresh"] = threshold
    return results


def squad_question_scores(predictions, answers):
    """Exact match and F1 (percent, 0 to 100) of every question, as `squad_scores` counts them.

    Without no-answer probabilities, `squad_scores`'s `"exact_match"` and `"f1"` are the
    means of these.

    Args:
        predictions: as for `squad_scores`.
        answers: as for `squad_scores`.

    Returns:
        dict from question id (in the order of `answers`) to a dict with float
        `"exact_match"` and `"f1"`.

    Examples:
    >>> squad_question_scores({"q1": "Eiffel Tower"}, {"q1": ["the Eiffel Tower", "Paris"]})
    {'q1': {'exact_match': 100.0, 'f1': 100.0}}
    """
    gold = _gold_answer_lists(_as_mapping(answers, "answers"))
    question_ids = list(gold)
    raw_exact, raw_f1 = _raw_scores(gold, question_ids, _predicted_texts(predictions, question_ids))
    return {
        question_id: {"exact_match": 100.0 * float(exact), "f1": 100.0 * float(f1)}
        for question_id, exact, f1 in zip(question_ids, raw_exact, raw_f1)
    }


def _raw_scores(gold, question_ids, predicted_texts):
    """`(exact, f1)` arrays (0 to 1) of the questions, each the best over its gold answers."""
    if not question_ids:
        return np.zeros(0), np.zeros(0)
    # The script maximises exact match and F1 separately over the gold answers.
    return np.array(
        [
            np.max([_exact_and_f1(gold_text, predicted_text) for gold_text in gold[question_id]], axis=0)
            for question_id, predicted_text in zip(question_ids, predicted_texts)
        ],
        dtype=np.float64,
    ).T


def _predicted_texts(predictions, question_ids):
    """The prediction of every question, in order; "" (with a warning) where none is given."""
    predicted = _as_mapping(predictions, "predictions", question_ids)
    missing = [question_id for question_id in question_ids if question_id not in predicted]
    if missing:
        logger.warning(
            "%d of %d questions have no prediction and count as answered with '' (first: %r).",
            len(missing),
            len(question_ids),
            missing[0],
        )
    predicted_texts = [predicted.get(question_id, "") for question_id in question_ids]
    bad = next((text for text in predicted_texts if not isinstance(text, str)), None)
    if bad is not None:
        raise ValueError(f"Predictions must be strings. Received {bad!r}.")
    return predicted_texts


def _no_answer_probabilities(no_answer_probabilities, question_ids):
    """`(probabilities, visit_order)`: the no-answer probability of every question (0
    without them) and the order the threshold search visits ties in."""
    if no_answer_probabilities is None:
        return np.zeros(len(question_ids)), np.arange(len(question_ids))
    probability_map = _as_mapping(no_answer_probabilities, "no_answer_probabilities", question_ids)
    absent = [question_id for question_id in question_ids if question_id not in probability_map]
    if absent:
        raise ValueError(
            f"`no_answer_probabilities` lacks {len(absent)} question ids, e.g. {absent[0]!r}."
        )
    probabilities = np.array(
        [probability_map[question_id] for question_id in question_ids], dtype=np.float64
    )
    # The script breaks ties in the order of the probabilities file.
    position = {question_id: index for index, question_id in enumerate(question_ids)}
    visit_order = np.array([position[key] for key in probability_map if key in position], dtype=np.int64)
    return probabilities, visit_order


def _percent(values):
    # Python's sum adds in order, as the script does, so the figures match it bit for bit.
    return 100.0 * sum(values.tolist()) / len(values)
