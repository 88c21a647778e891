"""`BertClassifier.classify` and `BertTokenClassifier.tag`."""

import logging

import numpy as np
import pytest

from inference_helpers import shared_backbone
from inference_helpers import make_tokenizer
from inference_helpers import plant_logits
from inference_helpers import random_text
from inference_helpers import token_id_bonus
from kbert import inference
from kbert.inference import Classification
from kbert.inference import EntitySpan
from kbert.models import BertClassifier
from kbert.models import BertTokenClassifier

BIO = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
BIOES = ["O", "B-LOC", "I-LOC", "E-LOC", "S-LOC", "B-PER", "I-PER", "E-PER", "S-PER"]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return make_tokenizer(tmp_path_factory.mktemp("classify_tag"))


@pytest.fixture(scope="module")
def backbone():
    return shared_backbone()


@pytest.fixture(scope="module")
def classifier(backbone, tokenizer):
    model = BertClassifier(backbone, label_names=["negative", "positive", "neutral"])
    model.tokenizer = tokenizer
    return model


@pytest.fixture(scope="module")
def tagger(backbone, tokenizer):
    model = BertTokenClassifier(backbone, label_names=BIO)
    model.tokenizer = tokenizer
    return model


def test_classify_matches_the_model(classifier, tokenizer):
    texts = ["the cat sat .", "Café 北京 naïve", "a dog ran to paris and the cat sat on the mat"]
    pairs = ["who sat ?", "what ?", "where did the dog run ?"]
    # Inputs built by hand, in the shape `classify` uses (4 rows of 32 tokens).
    inputs = {
        key: np.resize(value, (4, 32))
        for key, value in tokenizer(texts, pairs, sequence_length=32).items()
    }
    logits = np.asarray(classifier.predict_on_batch(inputs), dtype="float64")[:3]
    expected = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    results = classifier.classify(texts, pairs=pairs)
    assert len(results) == 3
    for result, row in zip(results, expected):
        assert isinstance(result, Classification)
        assert list(result.probabilities) == ["negative", "positive", "neutral"]
        np.testing.assert_allclose(list(result.probabilities.values()), row, atol=1e-5)
        assert result.label == classifier.label_names[int(row.argmax())]
        assert result.probability == pytest.approx(row.max(), abs=1e-5)
    single = classifier.classify(texts[0], pairs=pairs[0])
    assert single.label == results[0].label

    unnamed = BertClassifier(classifier.backbone, num_classes=2)
    assert list(inference.classify(unnamed, tokenizer, "the cat").probabilities) == ["0", "1"]
    with pytest.raises(ValueError, match="`pairs` must match `text_or_texts`"):
        classifier.classify(texts, pairs=pairs[:2])
    with pytest.raises(ValueError, match="`pairs` must match `text_or_texts`"):
        classifier.classify(texts, pairs="who?")


def test_every_tag_span_is_an_exact_substring(tagger, backbone, tokenizer):
    bioes = BertTokenClassifier(backbone, label_names=BIOES)
    bioes.tokenizer = tokenizer
    rng = np.random.default_rng(3)
    texts = [random_text(rng, int(rng.integers(0, 14))) for _ in range(24)]
    spans_seen = 0
    for model in (tagger, bioes):
        for aggregation in ("first", "average"):
            results = model.tag(texts, aggregation=aggregation, batch_size=8)
            assert len(results) == len(texts)
            for text, spans in zip(texts, results):
                previous_end = 0
                for span in spans:
                    assert isinstance(span, EntitySpan)
                    assert text[span.start : span.end] == span.text != ""
                    assert span.start >= previous_end, "spans are ordered and disjoint"
                    assert span.label in ("LOC", "PER") and 0 < span.score <= 1
                    previous_end = span.end
                spans_seen += len(spans)
    assert spans_seen > 30


def _plant_tags(monkeypatch, model, tokenizer, token_to_label):
    labels = model.label_names

    def bonus(inputs):
        mapping = {token: labels.index(label) for token, label in token_to_label.items()}
        extra = token_id_bonus(tokenizer, inputs["token_ids"], mapping, len(labels))
        extra[..., labels.index("O")] += 20.0  # everything else is O
        return extra

    plant_logits(monkeypatch, model, bonus)


def test_tag_labels_words_by_their_first_sub_word(tagger, tokenizer, monkeypatch):
    _plant_tags(
        monkeypatch,
        tagger,
        tokenizer,
        {
            "cat": "B-PER",
            "##s": "O",
            "paris": "B-LOC",
            ",": "I-LOC",
            "france": "I-LOC",
            "un": "O",
            "##aff": "B-PER",
            "##able": "B-PER",
        },
    )
    text = "The  Cats ran to PARIS , France , unaffable."
    spans = tagger.tag(text)
    assert [(s.label, s.text, s.start, s.end) for s in spans] == [
        ("PER", "Cats", 5, 9),
        ("LOC", "PARIS , France ,", 17, 33),
    ]
    assert all(span.score > 0.99 for span in spans)
    # Averaging over sub-words: "unaffable" is 2/3 B-PER; "Cats" half B-PER, half O
    # (a tie, which the first label, O, wins).
    averaged = tagger.tag(text, aggregation="average")
    assert [s.text for s in averaged] == ["PARIS , France ,", "unaffable"]
    assert averaged[-1].score == pytest.approx(2 / 3, abs=0.01)
    assert tagger.tag([text, "the cat"]) == [
        spans,
        [EntitySpan("PER", 4, 7, "cat", spans[0].score)],
    ]


def test_tag_bad_input(tagger, backbone, tokenizer, caplog):
    text = "the cat sat on the mat . " * 10
    # A head that tags every word B-LOC: spans whatever the random weights before it.
    tags_every_word = BertTokenClassifier(backbone, label_names=BIO)
    tags_every_word.tokenizer = tokenizer
    head = tags_every_word.get_layer("token_classifier_head")
    kernel, bias = head.get_weights()
    head.set_weights([np.zeros_like(kernel), np.eye(len(BIO), dtype=bias.dtype)[1] * 10])
    with caplog.at_level(logging.WARNING, logger="kbert.inference"):
        spans = tags_every_word.tag(text)
    assert "truncated" in caplog.text
    kept = tokenizer.encode(text, max_length=32).offsets[-2, 1]
    assert spans and all(span.end <= kept for span in spans)
    with pytest.raises(ValueError, match="`aggregation` must be one of"):
        tagger.tag("the cat", aggregation="max")
    unnamed = BertTokenClassifier(backbone, num_classes=3)
    with pytest.raises(ValueError, match="needs the model's tag names"):
        inference.tag(unnamed, tokenizer, "the cat")
    assert tagger.tag("") == [] and tagger.tag([]) == []
