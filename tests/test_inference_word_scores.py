"""`score_words`: given words at each [MASK], words of several pieces by the chain rule."""

import numpy as np
import pytest

from inference_helpers import make_tokenizer
from inference_helpers import shared_backbone
from kbert.inference import score_words
from kbert.models import BertMaskedLM


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return make_tokenizer(tmp_path_factory.mktemp("word_scores"), max_length=32)


@pytest.fixture(scope="module")
def model(tokenizer):
    model = BertMaskedLM(shared_backbone())
    model.tokenizer = tokenizer
    return model


def _piece_probability(model, tokenizer, token_ids, position, piece):
    """The softmax at `position` of `token_ids` (one row, built by hand), at `piece`."""
    length = 32
    inputs = {
        "token_ids": np.zeros((1, length), "int32"),
        "segment_ids": np.zeros((1, length), "int32"),
        "padding_mask": np.zeros((1, length), bool),
        "mask_positions": np.array([[position]], "int32"),
    }
    inputs["token_ids"][0, : len(token_ids)] = token_ids
    inputs["padding_mask"][0, : len(token_ids)] = True
    logits = np.asarray(model.predict_on_batch(inputs), dtype="float64")[0, 0]
    probabilities = np.exp(logits - logits.max())
    return probabilities[tokenizer.token_to_id(piece)] / probabilities.sum()


def test_one_piece_words_score_as_fill_mask_targets_do(model, tokenizer):
    text = "the [MASK] sat on the [MASK] ."
    words = ["cat", "dog", "mat"]
    scores = score_words(model, None, text, words)
    expected = model.fill_mask(text, top_k=3, targets=words)
    assert [(mask.start, mask.end) for mask in scores] == [(4, 10), (22, 28)]
    for mask, filled in zip(scores, expected.masks):
        assert [score.word for score in mask.scores] == words
        by_token = {candidate.token: candidate.probability for candidate in filled.candidates}
        for score in mask.scores:
            assert score.pieces == (score.word,) and score.reason == ""
            assert score.probability == pytest.approx(by_token[score.word], abs=1e-6)
            assert score.text == text[: mask.start] + score.word + text[mask.end :]


def test_a_word_of_several_pieces_is_the_product_of_its_pieces(model, tokenizer):
    text = "a [MASK] ran ."
    (mask,) = score_words(model, None, text, ["cats", "unaffable", "Cats"])
    cats, unaffable, upper = mask.scores
    assert cats.pieces == ("cat", "##s") and unaffable.pieces == ("un", "##aff", "##able")
    # By hand: [CLS] a [MASK] [MASK] ran . [SEP], then "cat" in the first mask.
    ids = tokenizer.encode(text).token_ids.tolist()
    mask_id = tokenizer.mask_token_id
    first = ids[:2] + [mask_id, mask_id] + ids[3:]
    second = ids[:2] + [tokenizer.token_to_id("cat"), mask_id] + ids[3:]
    expected = _piece_probability(model, tokenizer, first, 2, "cat") * _piece_probability(
        model, tokenizer, second, 3, "##s"
    )
    assert cats.probability == pytest.approx(expected, rel=1e-4)
    assert 0 < unaffable.probability < 1
    # Case variants are not merged: each is listed, with the same pieces and score.
    assert upper.word == "Cats" and upper.pieces == cats.pieces
    assert upper.probability == cats.probability
    assert cats.text == "a cats ran ." and upper.text == "a Cats ran ."


def test_words_that_cannot_be_scored_say_why(model, tokenizer):
    text = "the cat " * 14 + "[MASK] ."  # 32 tokens: the limit
    (mask,) = score_words(model, None, text, ["dog", "xyzzy", "unaffable", " "])
    dog, unknown, long_word, blank = mask.scores
    assert dog.probability is not None and dog.reason == ""
    assert unknown.probability is None and "the vocabulary lacks a piece" in unknown.reason
    assert long_word.probability is None
    assert "longer than the model's limit of 32 tokens" in long_word.reason
    assert blank.probability is None and "no word pieces" in blank.reason


def test_bad_input(model):
    with pytest.raises(ValueError, match="at least one"):
        score_words(model, None, "no mask here", ["cat"])
    with pytest.raises(ValueError, match="`words` must be a non-empty list"):
        score_words(model, None, "the [MASK] .", [])
    with pytest.raises(ValueError, match="`text` must be a string"):
        score_words(model, None, None, ["cat"])
