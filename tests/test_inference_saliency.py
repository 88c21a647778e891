"""`kbert.inference.saliency`: occlusion, gradient x input, integrated gradients."""

import keras
import numpy as np
import pytest

from inference_helpers import VOCABULARY
from inference_helpers import make_tokenizer
from model_helpers import TINY
from kbert import inference
from kbert.inference import EntitySpan
from kbert.inference import TokenSaliency
from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.models import BertTokenClassifier

BIO = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
TEXT = "the cats sat on a mat of paris , france"
# Integrated gradients' sum against f(x) - f(baseline) (changes of 1e-2 on this model),
# at 64 steps of the midpoint rule: measured 1e-6 to 3e-6 on JAX (4e-5 at 16 steps,
# 3e-7 at 256: the rule's 1/steps^2), quadrature error and float32 included.
COMPLETENESS_TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return make_tokenizer(tmp_path_factory.mktemp("saliency"))


@pytest.fixture(scope="module")
def backbone():
    # Wider initial weights than BERT's 0.02, so that single pieces move the
    # probabilities by amounts well above float32 noise.
    config = dict(TINY, vocabulary_size=len(VOCABULARY), max_positions=32, initializer_range=0.3)
    keras.utils.set_random_seed(7)
    return BertBackbone(**config)


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


def _masked_ids(tokenizer, text, positions):
    """The text's ids, then one row per position with that piece replaced by [MASK]."""
    encoding = tokenizer.encode(text)
    rows = [encoding.token_ids]
    for position in positions:
        ids = encoding.token_ids.copy()
        ids[position] = tokenizer.mask_token_id
        rows.append(ids)
    return np.stack(rows)


def _probabilities(model, token_ids):
    """Softmax of the model's logits on unpadded rows of ids, in float64."""
    inputs = {
        "token_ids": token_ids,
        "segment_ids": np.zeros_like(token_ids),
        "padding_mask": np.ones_like(token_ids),
    }
    logits = np.asarray(model.predict_on_batch(inputs), "float64")
    return np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)


def test_occlusion_equals_classify_on_the_masked_texts(classifier, tokenizer):
    result = inference.saliency(classifier, None, TEXT, target="positive", batch_size=4)
    assert isinstance(result, TokenSaliency)
    assert result.method == "occlusion" and result.target == "positive"
    assert result.tokens == tuple(tokenizer.encode(TEXT).tokens[1:-1])
    assert "##s" in result.tokens
    for token, (start, end) in zip(result.tokens, result.offsets):
        assert TEXT[start:end] == token.removeprefix("##")
    original = classifier.classify(TEXT).probabilities["positive"]
    assert result.target_score == pytest.approx(original, abs=1e-5)
    rows = _masked_ids(tokenizer, TEXT, result.positions)
    by_ids = _probabilities(classifier, rows)[:, 1]
    np.testing.assert_allclose(result.scores, by_ids[0] - by_ids[1:], atol=1e-5)
    assert np.abs(result.scores).max() > 1e-3  # the checks compare real signal
    # Through `classify` on texts with a typed "[MASK]", wherever that text makes the
    # masked ids ("cat" of "cats" does not: the "s" left alone is no "##s").
    checked = 0
    for index, (start, end) in enumerate(result.offsets):
        masked_text = f"{TEXT[:start]} [MASK] {TEXT[end:]}"
        if not np.array_equal(tokenizer.encode(masked_text).token_ids, rows[index + 1]):
            continue
        masked = classifier.classify(masked_text).probabilities["positive"]
        assert result.scores[index] == pytest.approx(original - masked, abs=1e-5)
        checked += 1
    assert checked >= len(result.tokens) - 2
    best = inference.saliency(classifier, None, TEXT)
    assert best.target == classifier.classify(TEXT).label


def test_occlusion_on_a_tagger_entity(tagger, tokenizer):
    entities = tagger.tag(TEXT)
    assert entities, "the tiny tagger must find an entity in the text"
    entity = max(entities, key=lambda span: span.end - span.start)
    result = inference.saliency(tagger, None, TEXT, target=entity)
    assert result.target == entity.label and result.target_span == (entity.start, entity.end)
    assert result.target_score == pytest.approx(entity.score, abs=1e-5)
    # Reference: the model on the masked ids, the entity's words' tags by hand.
    encoding = tokenizer.encode(TEXT)
    first_pieces = [
        index for index in range(1, len(encoding) - 1)
        if encoding.word_ids[index] != encoding.word_ids[index - 1]
        and encoding.offsets[index, 0] < entity.end and encoding.offsets[index, 1] > entity.start
    ]
    probabilities = _probabilities(tagger, _masked_ids(tokenizer, TEXT, result.positions))
    tags = probabilities[0, first_pieces].argmax(axis=-1)
    values = probabilities[:, first_pieces, tags].mean(axis=1)
    np.testing.assert_allclose(result.scores, values[0] - values[1:], atol=1e-5)
    first = entities[0]
    assert inference.saliency(tagger, None, TEXT).target_span == (first.start, first.end)


def _view_probability(model, vectors, target_index):
    """The classifier's probability of `target_index` from token vectors (1, L, H)."""
    length = vectors.shape[1]
    logits = model.with_token_vectors().predict_on_batch({
        "token_vectors": vectors.astype("float32"),
        "segment_ids": np.zeros((1, length), "int32"),
        "padding_mask": np.ones((1, length), "int32"),
    })
    logits = np.asarray(logits, "float64")[0]
    return float(np.exp(logits[target_index]) / np.exp(logits).sum())


def test_gradient_x_input_equals_finite_differences(classifier, tokenizer):
    text = "the cat sat on a mat"
    result = inference.saliency(classifier, None, text, target=1, method="gradient_x_input")
    assert result.method == "gradient_x_input" and result.target == "positive"
    assert result.target_score == pytest.approx(
        classifier.classify(text).probabilities["positive"], abs=1e-5
    )
    encoding = tokenizer.encode(text)
    table = np.asarray(classifier.backbone.token_embedding.embeddings, "float32")
    vectors = table[encoding.token_ids][None]  # (1, L, H)
    assert _view_probability(classifier, vectors, 1) == pytest.approx(result.target_score, abs=1e-5)
    # d/de f(x with piece i scaled by 1 + e) at e = 0 is grad_i . x_i: central differences.
    epsilon = 1e-2
    expected = []
    for position in result.positions:
        up, down = vectors.copy(), vectors.copy()
        up[0, position] *= 1 + epsilon
        down[0, position] *= 1 - epsilon
        difference = _view_probability(classifier, up, 1) - _view_probability(classifier, down, 1)
        expected.append(difference / (2 * epsilon))
    np.testing.assert_allclose(result.scores, expected, rtol=2e-2, atol=2e-5)
    assert np.abs(result.scores).max() > 1e-3


@pytest.mark.parametrize("baseline", ["pad", "zero"])
def test_integrated_gradients_add_up_to_the_change_from_the_baseline(classifier, baseline):
    result = inference.saliency(
        classifier, None, TEXT, method="integrated_gradients", steps=64, baseline=baseline,
        batch_size=16,
    )
    assert result.steps == 64 and result.baseline_score is not None
    change = result.target_score - result.baseline_score
    assert abs(change) > 2e-3  # a real change to account for
    assert float(result.scores.sum()) == pytest.approx(change, abs=COMPLETENESS_TOLERANCE)


def test_integrated_gradients_on_a_tagger(tagger):
    entity = tagger.tag(TEXT)[0]
    result = inference.saliency(tagger, None, TEXT, target=entity, method="integrated_gradients")
    assert result.target_score == pytest.approx(entity.score, abs=1e-5)
    change = result.target_score - result.baseline_score
    assert float(result.scores.sum()) == pytest.approx(change, abs=COMPLETENESS_TOLERANCE)


def test_export_records(classifier):
    result = inference.saliency(classifier, None, "the cat sat")
    data = result.as_dict()
    assert data["method"] == "occlusion" and data["target"] == result.target
    assert [row["token"] for row in data["tokens"]] == list(result.tokens)
    assert [row["score"] for row in data["tokens"]] == pytest.approx(result.scores.tolist())
    # The task models carry it as a method.
    np.testing.assert_array_equal(classifier.saliency("the cat sat").scores, result.scores)


def test_saliency_bad_input(classifier, tagger, backbone, tokenizer):
    with pytest.raises(ValueError, match="`method` must be one of"):
        inference.saliency(classifier, None, TEXT, method="lime")
    with pytest.raises(ValueError, match="`target` must be None, one of the labels"):
        inference.saliency(classifier, None, TEXT, target="happy")
    with pytest.raises(ValueError, match="`target` must be None, one of the labels"):
        inference.saliency(classifier, None, TEXT, target=3)
    with pytest.raises(ValueError, match="no word-piece to score"):
        inference.saliency(classifier, None, "   ")
    with pytest.raises(ValueError, match="`steps` must be"):
        inference.saliency(classifier, None, TEXT, method="integrated_gradients", steps=0)
    with pytest.raises(ValueError, match="covers no word"):
        inference.saliency(tagger, None, "the cat", target=EntitySpan("LOC", 40, 45, "x", 1.0))
    with pytest.raises(ValueError, match="needs a classifier or a token classifier"):
        inference.saliency(backbone, tokenizer, TEXT)


def test_occlusion_scores_both_texts_of_a_pair(classifier, tokenizer):
    text, pair = "the cats sat", "on a mat of paris"
    result = inference.saliency(classifier, None, text, target="positive", pair=pair)
    encoding = tokenizer.encode(text, pair)
    positions = np.flatnonzero(encoding.sequence_ids >= 0)
    assert result.positions == tuple(positions.tolist())
    assert result.sequence_ids == tuple(encoding.sequence_ids[positions].tolist())
    assert set(result.sequence_ids) == {0, 1}
    for record in result.records():
        source = pair if record["sequence"] else text
        assert source[record["start"] : record["end"]] == record["token"].removeprefix("##")
    # Each score is the drop of the probability when that piece alone is masked,
    # the segments of the pair kept.
    rows = [encoding.token_ids]
    for position in positions:
        ids = encoding.token_ids.copy()
        ids[position] = tokenizer.mask_token_id
        rows.append(ids)
    token_ids = np.stack(rows)
    inputs = {
        "token_ids": token_ids,
        "segment_ids": np.repeat(encoding.segment_ids[None], len(rows), axis=0),
        "padding_mask": np.ones_like(token_ids),
    }
    logits = np.asarray(classifier.predict_on_batch(inputs), "float64")
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    positive = probabilities[:, 1]
    np.testing.assert_allclose(result.scores, positive[0] - positive[1:], atol=2e-5)
    expected = classifier.classify(text, pair).probabilities["positive"]
    assert result.target_score == pytest.approx(expected, abs=1e-5)
    assert result.as_dict()["pair"] == pair


def test_a_pair_is_for_a_classifier(tagger):
    with pytest.raises(ValueError, match="`pair` is a classifier's second text"):
        inference.saliency(tagger, None, "the cat", pair="a mat")
