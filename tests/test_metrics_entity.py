"""kbert.metrics entity scores: hand-checked chunking and parity with seqeval's default mode."""

import logging
import warnings

import numpy as np
import pytest

from kbert.metrics import entity_scores, entity_scores_by_type, extract_entities


def test_bio_example_from_seqeval_docs():
    y_true = [["O", "O", "B-MISC", "I-MISC", "B-MISC", "O", "O"], ["B-PER", "I-PER", "O"]]
    y_pred = [["O", "O", "B-MISC", "I-MISC", "B-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    scores = entity_scores(y_true, y_pred)
    assert scores == pytest.approx({"precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3}, abs=1e-15)
    by_type = entity_scores_by_type(y_true, y_pred)
    assert list(by_type) == ["MISC", "PER"]
    assert by_type["MISC"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2}
    assert by_type["PER"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 1}


@pytest.mark.parametrize(
    "tags, expected",
    [
        # Lenient BIO: an I- after O or after another type starts an entity.
        (["I-PER", "I-PER", "O", "I-LOC", "I-ORG"], [("PER", 0, 2), ("LOC", 3, 4), ("ORG", 4, 5)]),
        # IOB1: B- separates two adjacent entities of the same type.
        (["I-PER", "B-PER", "I-PER"], [("PER", 0, 1), ("PER", 1, 3)]),
        # BIOES: S- is a one-token entity, E- closes one, an E- after E- starts a new one.
        (
            ["B-LOC", "I-LOC", "E-LOC", "S-PER", "E-PER", "E-PER"],
            [("LOC", 0, 3), ("PER", 3, 4), ("PER", 4, 5), ("PER", 5, 6)],
        ),
        (["O", "O"], []),
        ([], []),
    ],
)
def test_extract_entities_hand_checked(tags, expected):
    assert extract_entities(tags) == expected


def test_entities_do_not_cross_sentences():
    scores = entity_scores([["O", "B-PER"], ["I-PER", "O"]], [["O", "B-PER"], ["O", "O"]])
    # Gold: PER(1) and PER starting the second sentence; prediction gets the first only.
    assert scores == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3, abs=1e-15)}


def test_no_entities_scores_zero():
    assert entity_scores([["O"]], [["O"]]) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_flat_sequence_is_one_sentence_and_tuples_are_accepted():
    assert entity_scores(["B-PER", "O"], ["B-PER", "O"])["f1"] == 1.0
    assert entity_scores((("B-PER", "O"),), np.array([["B-PER", "O"]]))["f1"] == 1.0


def test_malformed_tags_log_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="kbert.metrics.entity_metrics"):
        entity_scores([["X-PER", "O"]], [["B-PER", "O"]])
    assert "X-PER" in caplog.text


@pytest.mark.parametrize(
    "y_true, y_pred, message",
    [
        ([["O"], ["O"]], [["O"]], "same number of sequences"),
        ([["O", "O"]], [["O"]], "Sequence 0 has 2 gold tags but 1 predicted"),
        ([["O", ""]], [["O", "O"]], "empty tag"),
        ([["O"], "O"], [["O"], ["O"]], "not a mix"),
    ],
)
def test_bad_inputs_raise(y_true, y_pred, message):
    with pytest.raises(ValueError, match=message):
        entity_scores(y_true, y_pred)


# Tag soup: valid BIO/BIOES tags in random order (invalid transitions everywhere), plus
# malformed tags that seqeval still scores (bare letters, unknown letters, empty types).
_TYPES = ["PER", "LOC", "ORG"]
_SOUP = ["O"] * 6 + [f"{letter}-{kind}" for letter in "BIES" for kind in _TYPES]
_MALFORMED = ["B", "I", "S", "E", "X-PER", "B-", "I-LOC-CITY", "O-PER", ".", "-ORG", "PER"]


def _random_sequences(rng, count, malformed_rate):
    tag_pool = np.array(_SOUP + _MALFORMED)
    weights = np.where(np.arange(len(tag_pool)) < len(_SOUP), 1.0 - malformed_rate, malformed_rate)
    weights /= weights.sum()
    lengths = rng.integers(0, 12, size=count)
    return [rng.choice(tag_pool, size=length, p=weights).tolist() for length in lengths]


def _perturb(rng, sequences):
    """Predictions: the gold tags with about a third of them replaced by soup."""
    return [
        [tag if rng.random() < 0.7 else str(rng.choice(_SOUP)) for tag in sequence] for sequence in sequences
    ]


def test_randomised_tag_soup_equals_seqeval():
    seqeval_metrics = pytest.importorskip("seqeval.metrics")
    from seqeval.metrics.sequence_labeling import get_entities, precision_recall_fscore_support

    rng = np.random.default_rng(3)
    largest_difference = 0.0
    sequences_compared = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seqeval warns on malformed tags and zero divisions
        for case in range(40):
            malformed_rate = 0.0 if case % 2 else 0.1
            y_true = _random_sequences(rng, int(rng.integers(1, 30)), malformed_rate)
            y_pred = (
                _perturb(rng, y_true) if case % 4 else _random_sequences(rng, len(y_true), malformed_rate)
            )
            y_pred = [
                sequence[: len(gold)] + ["O"] * (len(gold) - len(sequence))
                for gold, sequence in zip(y_true, y_pred)
            ]
            sequences_compared += len(y_true)
            ours = entity_scores(y_true, y_pred)
            theirs = {
                "precision": seqeval_metrics.precision_score(y_true, y_pred),
                "recall": seqeval_metrics.recall_score(y_true, y_pred),
                "f1": seqeval_metrics.f1_score(y_true, y_pred),
            }
            for key in theirs:
                largest_difference = max(largest_difference, abs(ours[key] - theirs[key]))

            by_type = entity_scores_by_type(y_true, y_pred)
            precision, recall, f1, support = precision_recall_fscore_support(y_true, y_pred)
            assert len(by_type) == len(support)
            for index, scores in enumerate(by_type.values()):
                assert scores["support"] == support[index]
                for key, values in (("precision", precision), ("recall", recall), ("f1", f1)):
                    largest_difference = max(largest_difference, abs(scores[key] - values[index]))

            for sequence in y_true[:5]:
                expected = [(kind, start, end + 1) for kind, start, end in get_entities(sequence)]
                if all(tag in _SOUP for tag in sequence):  # malformed chunks may cross sentences
                    assert extract_entities(sequence) == expected
    assert sequences_compared >= 500
    assert largest_difference <= 1e-12
