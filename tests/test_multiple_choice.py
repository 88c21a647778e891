"""`BertMultipleChoice`: its inputs, its preprocessor, `choose`, and saving it."""

import keras
import numpy as np
import pytest

from fine_tuning_data import VOCABULARY
from fine_tuning_data import make_tiny_preset
from kbert import BertMultipleChoice
from kbert.inference import Choice
from kbert.inference import choose
from kbert.preprocessing import BucketedDataset
from kbert.preprocessing import MultipleChoicePreprocessor

CONTEXT = "the cat sat on the mat near the old house"
ENDINGS = ("and ran quickly", "under a big green tree", "with the dog", "slowly", "on a road")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    folder = make_tiny_preset(tmp_path_factory.mktemp("choice") / "preset", hidden_dropout=0.0)
    model = BertMultipleChoice.from_preset(folder)
    # A trained-looking head: random, but far from zero, so the scores differ clearly.
    head = model.get_layer("choice_head")
    rng = np.random.default_rng(0)
    head.kernel.assign(rng.normal(size=head.kernel.shape).astype("float32"))
    head.bias.assign(np.array([0.3], "float32"))
    return model


def alone_score(model, context, ending):
    """The score of one (context, ending) pair on its own: no padding, no other ending."""
    encoding = model.tokenizer.encode(context, ending)
    inputs = {
        "token_ids": encoding.token_ids[None].astype("int32"),
        "segment_ids": encoding.segment_ids[None].astype("int32"),
        "padding_mask": np.ones((1, len(encoding.token_ids)), "int32"),
    }
    pooled = model.backbone(inputs)["pooled_output"]
    return float(keras.ops.convert_to_numpy(model.get_layer("choice_head")(pooled))[0, 0])


def test_two_and_five_choices_score_each_ending_as_it_scores_alone(model):
    alone = [alone_score(model, CONTEXT, ending) for ending in ENDINGS]
    assert np.ptp(alone) > 1e-3  # the endings score differently
    for count in (2, 5):
        features = model.preprocessor.features(
            {"context": [CONTEXT, CONTEXT], "endings": [ENDINGS[:count], ENDINGS[::-1][:count]]}
        )
        batch = BucketedDataset(
            features.token_ids, features.segment_ids, batch_size=2, buckets=(64,), shuffle=False
        )[0][0]
        assert batch["token_ids"].shape == (2, count, 64)
        logits = keras.ops.convert_to_numpy(model(batch))
        assert logits.shape == (2, count)
        np.testing.assert_allclose(logits[0], alone[:count], atol=1e-4)
        np.testing.assert_allclose(logits[1], alone[::-1][:count], atol=1e-4)


def test_inputs_must_be_choices_of_rows(model):
    rows = {name: np.ones((2, 5), "int32") for name in ("token_ids", "segment_ids", "padding_mask")}
    with pytest.raises(ValueError, match=r"\(batch_size, num_choices, sequence_length\)"):
        model(rows)
    one_choice = {name: value[:, None, :] for name, value in rows.items()}
    with pytest.raises(ValueError, match="at least 2 choices"):
        model(one_choice)
    too_big = {name: np.ones((1, 2, 5), "int32") for name in rows}
    too_big["token_ids"][0, 1, 3] = len(VOCABULARY) + 5
    with pytest.raises(ValueError, match=r"token_ids\[1, 3\]"):
        model(too_big)


def test_preprocessor_packs_each_ending_after_the_context(model):
    preprocessor = MultipleChoicePreprocessor(model.tokenizer, sequence_length=12)
    features = preprocessor.features(
        {"context": [CONTEXT], "endings": [["slowly", "near a big green tree"]]}, [1]
    )
    first, second = features.token_ids[0]
    assert features.labels.tolist() == [1]
    # Longest first: the long context loses tokens, the short ending is kept whole.
    assert model.tokenizer.decode(first).split()[-1] == "slowly"
    assert len(first) == 12 and len(second) == 12
    assert features.segment_ids[0][0].tolist()[-2:] == [1, 1]
    with pytest.raises(ValueError, match=r"`y\[0\]` must be the index of one of the example's 2"):
        preprocessor.features({"context": [CONTEXT], "endings": [["a", "b"]]}, [2])
    with pytest.raises(ValueError, match="at least 2 endings"):
        preprocessor.features({"context": [CONTEXT], "endings": [["a"]]})
    with pytest.raises(ValueError, match="'context' and 'endings'"):
        preprocessor.features({"text": [CONTEXT]})


def test_choose_gives_a_probability_per_ending_and_the_best_one(model):
    result = choose(model, None, CONTEXT, list(ENDINGS[:3]))
    assert isinstance(result, Choice)
    assert len(result.probabilities) == 3 and sum(result.probabilities) == pytest.approx(1.0)
    alone = [alone_score(model, CONTEXT, ending) for ending in ENDINGS[:3]]
    assert result.index == int(np.argmax(alone))
    assert result.ending == ENDINGS[result.index]
    assert result.probability == max(result.probabilities)
    expected = np.exp(alone) / np.sum(np.exp(alone))
    np.testing.assert_allclose(result.probabilities, expected, atol=1e-4)
    assert model.choose(CONTEXT, list(ENDINGS[:3])) == result

    batch = model.choose(
        [CONTEXT, "a dog", CONTEXT], [list(ENDINGS[:3]), ["ran", "sat"], list(ENDINGS)]
    )
    assert batch[0] == result
    assert batch[1] == model.choose("a dog", ["ran", "sat"])
    np.testing.assert_allclose(
        batch[2].probabilities, model.choose(CONTEXT, list(ENDINGS)).probabilities, atol=1e-6
    )
    with pytest.raises(ValueError, match="at least 2 endings"):
        model.choose(CONTEXT, ["only one"])


def test_fit_takes_raw_text_and_saved_models_keep_the_tokenizer(model, tmp_path):
    x = {"context": [CONTEXT, "a dog ran"] * 2, "endings": [list(ENDINGS[:2]), ["on", "near"]] * 2}
    history = model.fit(x, [0, 1] * 2, epochs=1, batch_size=2, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert model.predict(x, verbose=0).shape == (4, 2)
    expected = model.choose(CONTEXT, list(ENDINGS)).probabilities

    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    assert isinstance(loaded, BertMultipleChoice) and loaded.tokenizer is not None
    np.testing.assert_allclose(loaded.choose(CONTEXT, list(ENDINGS)).probabilities, expected, atol=1e-5)

    model.save_to_preset(tmp_path / "preset")
    reloaded = BertMultipleChoice.from_preset(tmp_path / "preset")
    assert reloaded.freshly_initialized_heads == []
    np.testing.assert_allclose(
        reloaded.choose(CONTEXT, list(ENDINGS)).probabilities, expected, atol=1e-5
    )
