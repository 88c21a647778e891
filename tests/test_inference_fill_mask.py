"""`BertMaskedLM.fill_mask`: probabilities, offsets, targets, joint filling, bad input."""

import logging

import keras
import numpy as np
import pytest

from inference_helpers import shared_backbone
from inference_helpers import make_tokenizer
from inference_helpers import plant_logits
from kbert import inference
from kbert.inference import FillMaskResult
from kbert.models import BertMaskedLM
from kbert.tokenizer.bert_tokenizer import display_token


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return make_tokenizer(tmp_path_factory.mktemp("fill_mask"))


@pytest.fixture(scope="module")
def model(tokenizer):
    model = BertMaskedLM(shared_backbone())
    model.tokenizer = tokenizer
    return model


def _reference_probabilities(model, tokenizer, texts):
    """Per text: mask positions and softmax over the vocabulary at each.

    Inputs are built by hand, always 8 rows of 32 tokens with 4 mask slots, so every
    reference call reuses one compiled program.
    """
    inputs = {
        key: np.resize(value, (8, 32))
        for key, value in tokenizer(texts, sequence_length=32).items()
    }
    is_mask = inputs["token_ids"][: len(texts)] == tokenizer.mask_token_id
    positions = [np.flatnonzero(row) for row in is_mask]
    inputs["mask_positions"] = np.zeros((8, 4), "int32")
    for row, row_positions in enumerate(positions):
        inputs["mask_positions"][row, : len(row_positions)] = row_positions
    logits = np.asarray(model.predict_on_batch(inputs), dtype="float64")
    probabilities = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probabilities /= probabilities.sum(axis=-1, keepdims=True)
    return [
        (row_positions, probabilities[row, : len(row_positions)])
        for row, row_positions in enumerate(positions)
    ]


def test_one_mask_matches_the_model(model, tokenizer):
    text = "The  Cat [MASK] on the mat."
    result = model.fill_mask(text, top_k=4)
    assert isinstance(result, FillMaskResult) and result.text == text
    (mask,) = result.masks
    assert (mask.start, mask.end) == (9, 15) and text[mask.start : mask.end] == "[MASK]"
    [(positions, expected)] = _reference_probabilities(model, tokenizer, [text])
    assert mask.position == positions[0] == 3
    top = np.argsort(-expected[0])[:4]
    assert [c.token_id for c in mask.candidates] == top.tolist()
    np.testing.assert_allclose(
        [c.probability for c in mask.candidates], expected[0][top], atol=1e-5
    )
    for candidate in mask.candidates:
        assert candidate.token == tokenizer.id_to_token(candidate.token_id)
        word = candidate.token.removeprefix("##") if len(candidate.token) > 2 else candidate.token
        assert candidate.text == f"The  Cat {word} on the mat."
    assert result.filled_text == mask.candidates[0].text


def test_many_texts_and_masks_match_one_at_a_time(model, tokenizer):
    texts = [
        "[MASK] sat.",
        "the cat sat on the [MASK] and the dog [MASK] to paris , [MASK] .",
        "Café 北京 [MASK]",
        "who [MASK] on the mat ? the cat sat on the mat and ran .",
        "[MASK][MASK]",
    ]
    # batch_size=2: several batches, sorted by length, each its own bucket.
    results = model.fill_mask(texts, top_k=3, batch_size=2)
    assert [result.text for result in results] == texts
    references = _reference_probabilities(model, tokenizer, texts)
    for text, result, (positions, expected) in zip(texts, results, references):
        assert len(result.masks) == text.count("[MASK]")
        assert [mask.position for mask in result.masks] == positions.tolist()
        for mask, row in zip(result.masks, expected):
            assert text[mask.start : mask.end] == "[MASK]"
            np.testing.assert_allclose(
                [c.probability for c in mask.candidates], np.sort(row)[::-1][:3], atol=1e-5
            )
            # The other masks stay as typed; only this one is replaced.
            token = display_token(mask.candidates[0].token)
            assert mask.candidates[0].text == text[: mask.start] + token + text[mask.end :]


def test_targets_are_scored_at_each_mask(model, tokenizer):
    text = "the [MASK] sat on the [MASK] ."
    result = model.fill_mask(text, targets=["dog", "Cat", "mat", "cat"], top_k=10)
    [(_, expected)] = _reference_probabilities(model, tokenizer, [text])
    for mask, row in zip(result.masks, expected):
        tokens = [c.token for c in mask.candidates]
        assert sorted(tokens) == ["cat", "dog", "mat"]  # repeats dropped, lower-cased
        probabilities = [c.probability for c in mask.candidates]
        assert probabilities == sorted(probabilities, reverse=True)
        for candidate in mask.candidates:
            assert candidate.probability == pytest.approx(row[candidate.token_id], abs=1e-5)
    assert (
        len(model.fill_mask(text, targets=["dog", "cat", "mat"], top_k=2).masks[0].candidates) == 2
    )
    with pytest.raises(ValueError, match=r"'unaffable' tokenizes as \['un', '##aff', '##able'\]"):
        model.fill_mask(text, targets=["cat", "unaffable"])
    with pytest.raises(ValueError, match=r"'xyzzy' tokenizes as \['\[UNK\]'\]"):
        model.fill_mask(text, targets=["xyzzy"])
    with pytest.raises(ValueError, match="at least one word"):
        model.fill_mask(text, targets=[])


def test_joint_filling_goes_most_confident_first(model, tokenizer):
    text = "the [MASK] sat on the [MASK] ."
    independent = model.fill_mask(text, top_k=3)
    joint = model.fill_mask(text, top_k=3, joint=True)
    first = int(np.argmax([m.candidates[0].probability for m in independent.masks]))
    second = 1 - first
    # Step 1 is the independent prediction of the most confident mask.
    _assert_same_candidates(joint.masks[first], independent.masks[first])
    # Step 2 sees the token chosen in step 1.
    chosen = display_token(joint.masks[first].candidates[0].token)
    mask = joint.masks[first]
    again = model.fill_mask(text[: mask.start] + chosen + text[mask.end :], top_k=3)
    _assert_same_candidates(joint.masks[second], again.masks[0])
    # Each candidate's text has the other mask filled with its chosen token.
    assert "[MASK]" not in joint.filled_text
    for index in (first, second):
        for candidate in joint.masks[index].candidates:
            tokens = [display_token(m.candidates[0].token) for m in joint.masks]
            tokens[index] = display_token(candidate.token)
            (a, b) = joint.masks
            expected = (
                text[: a.start] + tokens[0] + text[a.end : b.start] + tokens[1] + text[b.end :]
            )
            assert candidate.text == expected
    assert joint.filled_text == joint.masks[0].candidates[0].text


def _assert_same_candidates(mask, other):
    assert [c.token_id for c in mask.candidates] == [c.token_id for c in other.candidates]
    np.testing.assert_allclose(
        [c.probability for c in mask.candidates],
        [c.probability for c in other.candidates],
        atol=1e-5,
    )


def test_continuation_pieces_read_without_hashes(model, tokenizer, monkeypatch):
    piece = tokenizer.token_to_id("##s")

    def bonus(inputs):
        extra = np.zeros(inputs["mask_positions"].shape + (tokenizer.vocabulary_size,), "float32")
        extra[..., piece] = 100.0
        return extra

    plant_logits(monkeypatch, model, bonus)
    (mask,) = model.fill_mask("the cat[MASK] sat").masks
    assert mask.candidates[0].token == "##s"
    assert mask.candidates[0].text == "the cats sat"


def test_bad_input(model, tokenizer, caplog):
    with pytest.raises(
        ValueError, match=r"at least one \[MASK\].*text_or_texts\[1\]='no mask here'"
    ):
        model.fill_mask(["a [MASK]", "no mask here"])
    with pytest.raises(ValueError, match="cut off 1 of its 2 \\[MASK\\]"):
        model.fill_mask("[MASK] " + "the cat sat . " * 10 + "[MASK]")
    with caplog.at_level(logging.WARNING, logger="kbert.inference"):
        result = model.fill_mask("[MASK] " + "the cat sat . " * 10)
    assert "truncated" in caplog.text and len(result.masks) == 1
    for arguments, message in [
        (dict(top_k=0), "`top_k` must be a positive integer"),
        (dict(joint="yes"), "`joint` must be True or False"),
        (dict(text_or_texts=3), "must be a string or a list of strings"),
    ]:
        with pytest.raises(ValueError, match=message):
            model.fill_mask(**(dict(text_or_texts="a [MASK]") | arguments))

    bare = BertMaskedLM(model.backbone)
    with pytest.raises(ValueError, match="BertMaskedLM has no tokenizer"):
        bare.fill_mask("a [MASK]")
    assert inference.fill_mask(bare, tokenizer, "a [MASK]").masks[0].start == 2


@pytest.mark.skipif(
    keras.backend.backend() == "torch", reason="PyTorch runs eagerly: nothing is compiled"
)
def test_one_compilation_per_bucket(tokenizer, monkeypatch):
    model = BertMaskedLM(shared_backbone())  # new model: nothing compiled yet
    model.tokenizer = tokenizer
    traces = []
    backbone_call = model.backbone.call

    def counting_call(*args, **kwargs):
        traces.append(1)  # runs once per trace, not per compiled call
        return backbone_call(*args, **kwargs)

    monkeypatch.setattr(model.backbone, "call", counting_call)
    words = "the cat sat on the mat and the dog ran to paris".split()
    # Lengths 3..8 (bucket 8), 9..16 (bucket 16) typed one word at a time, then
    # 16..31 tokens (buckets 16, 24 and 32).
    for length in range(1, 29):
        model.fill_mask(" ".join(words[: length % 12] + ["[MASK]"] + words[: length // 12]))
    short = len(traces)
    for length in range(13, 29):
        model.fill_mask("[MASK] " + " ".join((words * 3)[:length]))
    assert short == 2
    if keras.backend.backend() == "tensorflow":
        # After repeated retracing, tf.function relaxes the shape: fewer traces, never more.
        assert len(traces) <= 4
    else:
        assert len(traces) == 4
