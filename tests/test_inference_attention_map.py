"""`attention_map`: every layer's and head's weights over the real tokens of one text or pair."""

import numpy as np
import pytest

from inference_helpers import make_tokenizer
from inference_helpers import shared_backbone
from kbert.inference import AttentionMap
from kbert.inference import attention_map
from kbert.inference.attention_map import SEGMENT_A
from kbert.inference.attention_map import SEGMENT_B
from kbert.models import BertMaskedLM


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    model = BertMaskedLM(shared_backbone())
    model.tokenizer = make_tokenizer(tmp_path_factory.mktemp("attention_map"))
    return model


def _unpadded_weights(model, text):
    """The weights of the text alone, with no padding at all (call after `attention_map`,
    which builds the attention-weights model)."""
    inputs = model.tokenizer([text])
    inputs["padding_mask"] = inputs["padding_mask"].astype("int32")
    outputs = model.backbone.with_attention_weights().predict_on_batch(inputs)
    return np.asarray(outputs["attention_weights"])[0]


def test_the_map_covers_the_real_tokens_and_matches_an_unpadded_call(model):
    text = "The cat sat on the [MASK]."
    result = attention_map(model, None, text)
    assert isinstance(result, AttentionMap) and result.text == text
    assert result.tokens == ("[CLS]", "the", "cat", "sat", "on", "the", "[MASK]", ".", "[SEP]")
    assert result.offsets[0] == result.offsets[-1] == (0, 0)
    assert [text[start:end] for start, end in result.offsets[1:-1]] == [
        "The", "cat", "sat", "on", "the", "[MASK]", ".",
    ]
    # 9 real tokens, padded to the 16-token bucket inside: the padding is cut off.
    assert result.weights.shape == (2, 4, 9, 9) and result.weights.dtype == np.float32
    assert (result.num_layers, result.num_heads) == (2, 4)
    np.testing.assert_allclose(result.weights.sum(axis=-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(result.weights, _unpadded_weights(model, text), atol=1e-5)


def test_select_picks_a_head_or_averages(model):
    result = attention_map(model, model.tokenizer, "the dog ran to paris .")
    np.testing.assert_array_equal(result.select(1, 2), result.weights[1, 2])
    np.testing.assert_allclose(result.select(0, None), result.weights[0].mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(result.select(None, 3), result.weights[:, 3].mean(axis=0), atol=1e-6)
    average = result.select()
    assert average.shape == (8, 8)
    np.testing.assert_allclose(average.sum(axis=-1), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="`head` must be None or an index below 4"):
        result.select(0, 4)
    with pytest.raises(ValueError, match="`layer` must be None or an index below 2"):
        result.select(-1, 0)


def test_a_long_text_is_truncated_to_the_model_limit(model):
    result = attention_map(model, None, " ".join(["cat"] * 40))
    assert len(result.tokens) == 32 and result.tokens[-1] == "[SEP]"
    assert result.weights.shape == (2, 4, 32, 32)


def test_bad_text_is_a_value_error(model):
    with pytest.raises(ValueError, match="`text` must be a string"):
        attention_map(model, None, ["a list"])


def test_a_pair_is_packed_in_two_segments_and_its_blocks_are_slices(model):
    result = attention_map(model, None, "the cat sat .", pair="the dog ran .")
    assert result.tokens == (
        "[CLS]", "the", "cat", "sat", ".", "[SEP]", "the", "dog", "ran", ".", "[SEP]",
    )
    assert result.segment_ids == (0,) * 6 + (1,) * 5 and result.has_pair
    assert result.pair == "the dog ran ." and result.offsets[7] == (4, 7)
    inputs = model.tokenizer(["the cat sat ."], ["the dog ran ."])
    inputs["padding_mask"] = inputs["padding_mask"].astype("int32")
    unpadded = model.backbone.with_attention_weights().predict_on_batch(inputs)
    np.testing.assert_allclose(result.weights, np.asarray(unpadded["attention_weights"])[0], atol=1e-5)

    assert result.segment_tokens(SEGMENT_B) == ("the", "dog", "ran", ".", "[SEP]")
    a_to_b = result.block(SEGMENT_A, SEGMENT_B, layer=1, head=2)
    np.testing.assert_array_equal(a_to_b, result.weights[1, 2, :6, 6:])
    b_to_a = result.block(SEGMENT_B, SEGMENT_A)
    np.testing.assert_allclose(b_to_a, result.weights.mean(axis=(0, 1))[6:, :6], atol=1e-6)
    # What A gives B and what A keeps for itself make up every row of A.
    within_a = result.block(SEGMENT_A, SEGMENT_A, layer=1, head=2)
    np.testing.assert_allclose(a_to_b.sum(axis=-1) + within_a.sum(axis=-1), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="`segment` must be 0"):
        result.block(SEGMENT_A, 2)


def test_a_single_text_is_all_segment_a(model):
    result = attention_map(model, None, "the cat sat .")
    assert result.segment_ids == (0,) * 6 and not result.has_pair and result.pair is None
    assert result.block(SEGMENT_B, SEGMENT_A).shape == (0, 6)
    with pytest.raises(ValueError, match="`pair` must be None or a string"):
        attention_map(model, None, "the cat", pair=["a list"])
