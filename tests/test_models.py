"""Every model: shapes, serialisation, mixed precision, fit, and input validation."""

import keras
import numpy as np
import pytest
from model_helpers import TINY, make_inputs

from kbert.models import (
    BertBackbone,
    BertClassifier,
    BertMaskedLM,
    BertPretrainer,
    BertQuestionAnswerer,
    BertTokenClassifier,
)

NUM_MASKS = 3


def build(task, **config_overrides):
    backbone = BertBackbone(**{**TINY, **config_overrides})
    if task is BertBackbone:
        return backbone
    if task in (BertClassifier, BertTokenClassifier):
        return task(backbone, num_classes=3)
    return task(backbone)


def inputs_for(model, **kwargs):
    masks = NUM_MASKS if "mask_positions" in getattr(model, "extra_inputs", ()) else 0
    return make_inputs(num_masks=masks, **kwargs)


def targets_for(model, inputs, rng):
    batch, length = inputs["token_ids"].shape
    if isinstance(model, BertPretrainer):
        return {
            "mlm_logits": rng.integers(0, TINY["vocabulary_size"], (batch, NUM_MASKS)),
            "nsp_logits": rng.integers(0, 2, (batch,)),
        }
    if isinstance(model, BertMaskedLM):
        return rng.integers(0, TINY["vocabulary_size"], (batch, NUM_MASKS))
    if isinstance(model, BertClassifier):
        return rng.integers(0, 3, (batch,))
    if isinstance(model, BertTokenClassifier):
        labels = rng.integers(0, 3, (batch, length))
        return np.where(inputs["padding_mask"] == 1, labels, -100)
    if isinstance(model, BertQuestionAnswerer):
        return {
            "start_logits": rng.integers(0, 4, (batch,)),
            "end_logits": rng.integers(4, 6, (batch,)),
        }
    raise AssertionError(model)


def as_dict(outputs):
    if isinstance(outputs, dict):
        return {key: keras.ops.convert_to_numpy(value) for key, value in outputs.items()}
    return {"output": keras.ops.convert_to_numpy(outputs)}


ALL_MODELS = [
    BertBackbone,
    BertPretrainer,
    BertMaskedLM,
    BertClassifier,
    BertTokenClassifier,
    BertQuestionAnswerer,
]
TASKS = ALL_MODELS[1:]

EXPECTED_SHAPES = {
    BertBackbone: {"sequence_output": (3, 10, 32), "pooled_output": (3, 32)},
    BertPretrainer: {"mlm_logits": (3, NUM_MASKS, 97), "nsp_logits": (3, 2)},
    BertMaskedLM: {"output": (3, NUM_MASKS, 97)},
    BertClassifier: {"output": (3, 3)},
    BertTokenClassifier: {"output": (3, 10, 3)},
    BertQuestionAnswerer: {"start_logits": (3, 10), "end_logits": (3, 10)},
}


@pytest.mark.parametrize("model_class", ALL_MODELS)
def test_output_shapes(model_class):
    model = build(model_class)
    outputs = as_dict(model.predict(inputs_for(model), verbose=0))
    assert {key: value.shape for key, value in outputs.items()} == EXPECTED_SHAPES[model_class]


@pytest.mark.parametrize("model_class", ALL_MODELS)
def test_config_round_trip(model_class):
    model = build(model_class)
    clone = model_class.from_config(model.get_config())
    assert clone.get_config() == model.get_config()
    clone.set_weights(model.get_weights())
    inputs = inputs_for(model)
    expected, actual = as_dict(model.predict(inputs, verbose=0)), as_dict(
        clone.predict(inputs, verbose=0)
    )
    for key in expected:
        np.testing.assert_allclose(actual[key], expected[key], atol=1e-6)


@pytest.mark.parametrize("model_class", ALL_MODELS)
def test_keras_file_and_weights_round_trip(model_class, tmp_path):
    model = build(model_class)
    inputs = inputs_for(model)
    expected = as_dict(model.predict(inputs, verbose=0))

    model.save(tmp_path / "model.keras")
    restored = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    assert type(restored) is model_class
    for key, value in as_dict(restored.predict(inputs, verbose=0)).items():
        np.testing.assert_allclose(value, expected[key], atol=1e-6)

    model.save_weights(tmp_path / "model.weights.h5")
    fresh = build(model_class)
    fresh.load_weights(tmp_path / "model.weights.h5")
    for key, value in as_dict(fresh.predict(inputs, verbose=0)).items():
        np.testing.assert_allclose(value, expected[key], atol=1e-6)


def test_masked_lm_head_is_tied_to_token_embedding():
    model = build(BertMaskedLM)
    head = model.get_layer("masked_lm_head")
    assert head.token_embedding is model.backbone.token_embedding
    embedding = model.backbone.token_embedding.embeddings
    assert sum(v is embedding for v in model.trainable_weights) == 1


@pytest.mark.parametrize("model_class", TASKS)
def test_fit_lowers_loss(model_class):
    model = build(model_class)
    rng = np.random.default_rng(0)
    inputs = inputs_for(model, batch_size=4)
    targets = targets_for(model, inputs, rng)
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    history = model.fit(inputs, targets, epochs=12, batch_size=4, verbose=0)
    losses = history.history["loss"]
    assert np.isfinite(losses).all()
    assert losses[-1] < losses[0] * 0.9, losses


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
@pytest.mark.parametrize("model_class", TASKS)
def test_mixed_precision(model_class, policy):
    keras.mixed_precision.set_global_policy(policy)
    model = build(model_class)
    assert model.backbone.token_embedding.embeddings.dtype == "float32"
    assert model.backbone.embeddings.compute_dtype == policy.split("_")[1]
    inputs = inputs_for(model, batch_size=4)
    for value in as_dict(model.predict(inputs, verbose=0)).values():
        assert value.dtype == np.float32
        assert np.isfinite(value).all()
    model.compile(optimizer=keras.optimizers.Adam(1e-3))
    history = model.fit(
        inputs, targets_for(model, inputs, np.random.default_rng(1)), epochs=2, verbose=0
    )
    assert np.isfinite(history.history["loss"]).all()


@pytest.mark.parametrize("model_class", ALL_MODELS)
def test_padded_batch_equals_each_sequence_alone(model_class):
    model = build(model_class)
    inputs = inputs_for(model, batch_size=3, sequence_length=12)
    batched = as_dict(model.predict(inputs, verbose=0))
    lengths = inputs["padding_mask"].sum(axis=1)
    for row, length in enumerate(lengths):
        alone = {
            key: value[row : row + 1, :length] if key != "mask_positions" else value[row : row + 1]
            for key, value in inputs.items()
        }
        single = as_dict(model.predict(alone, verbose=0))
        for key, value in single.items():
            reference = batched[key][row : row + 1]
            if value.ndim >= 2 and value.shape[1] == length and reference.shape[1] == 12:
                reference = reference[:, :length]  # per-token outputs: compare real tokens
            np.testing.assert_allclose(value, reference, atol=1e-5)


def test_attention_weights_view_shares_weights_and_outputs():
    backbone = build(BertBackbone)
    inputs = make_inputs()
    plain = as_dict(backbone.predict(inputs, verbose=0))
    view = backbone.with_attention_weights()
    assert view is backbone.with_attention_weights()
    detailed = as_dict(view.predict(inputs, verbose=0))
    np.testing.assert_allclose(detailed["sequence_output"], plain["sequence_output"], atol=1e-5)
    weights = detailed["attention_weights"]
    assert weights.shape == (3, TINY["num_layers"], TINY["num_heads"], 10, 10)
    padded = inputs["padding_mask"] == 0
    for row in range(3):
        assert np.all(weights[row][..., padded[row]] == 0.0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)


def _bad_inputs():
    good = make_inputs(batch_size=2, sequence_length=6)
    too_long = make_inputs(batch_size=1, sequence_length=TINY["max_positions"] + 1)
    bad_ids = dict(good, token_ids=good["token_ids"].copy())
    bad_ids["token_ids"][1, 2] = TINY["vocabulary_size"]
    negative = dict(good, token_ids=good["token_ids"].copy())
    negative["token_ids"][0, 0] = -1
    bad_segments = dict(good, segment_ids=np.full_like(good["segment_ids"], 2))
    mismatched = dict(good, segment_ids=good["segment_ids"][:, :5])
    missing = {k: v for k, v in good.items() if k != "padding_mask"}
    return [
        (too_long, "at most 24 tokens.*sequence_length=25"),
        (bad_ids, r"`token_ids` must be in \[0, vocabulary_size=97\).*token_ids\[1, 2\]=97 \(min=0, max=97\)"),
        (negative, r"token_ids\[0, 0\]=-1"),
        (bad_segments, r"`segment_ids` must be in \[0, type_vocabulary_size=2\)"),
        (mismatched, r"`segment_ids` must have the same shape as `token_ids`.*\(2, 5\)"),
        (missing, r"Missing: \['padding_mask'\]"),
        (good["token_ids"], "BERT models take a dict"),
    ]


@pytest.mark.parametrize("case", range(7))
def test_bad_input_gives_clear_error_before_computation(case):
    bad, message = _bad_inputs()[case]
    model = build(BertClassifier)
    with pytest.raises(ValueError, match=message):
        model.predict(bad, verbose=0)
    with pytest.raises(ValueError, match=message):
        model(bad)
    with pytest.raises(ValueError, match=message):
        model.backbone(bad)


def test_bad_mask_positions():
    model = build(BertMaskedLM)
    inputs = make_inputs(batch_size=2, sequence_length=6, num_masks=2)
    inputs["mask_positions"][0, 1] = 6
    with pytest.raises(ValueError, match=r"`mask_positions` must be in \[0, sequence_length=6\)"):
        model.predict(inputs, verbose=0)
    inputs["mask_positions"] = inputs["mask_positions"][:1]
    with pytest.raises(ValueError, match="`mask_positions` must have shape"):
        model.predict(inputs, verbose=0)


def test_label_arguments():
    backbone = BertBackbone(**TINY)
    model = BertClassifier(backbone, label_names=["neg", "pos"])
    assert model.num_classes == 2
    with pytest.raises(ValueError, match="num_classes=3, label_names=\\['neg', 'pos'\\]"):
        BertClassifier(backbone, num_classes=3, label_names=["neg", "pos"])
    with pytest.raises(ValueError, match="`num_classes` \\(or `label_names`\\) is required"):
        BertTokenClassifier(backbone)
    with pytest.raises(ValueError, match="must be unique"):
        BertTokenClassifier(backbone, label_names=["O", "O"])


def test_keras_file_with_lambda_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "payload-ran"

    # A lambda is stored as marshalled bytecode; this one writes a file when it runs,
    # as an attacker's would.
    payload = eval(f"lambda x: (open({str(marker)!r}, 'w').close(), x)[1]")
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Lambda(payload)(inputs))
    marker.unlink()  # building the model ran it once
    model.save(tmp_path / "hostile.keras")
    with pytest.raises(ValueError, match="(?i)lambda.*unsafe|safe_mode"):
        keras.saving.load_model(tmp_path / "hostile.keras", safe_mode=True)
    assert not marker.exists()
    # The payload is real: loading without safe mode and calling the model runs it.
    unsafe = keras.saving.load_model(tmp_path / "hostile.keras", safe_mode=False)
    unsafe(np.ones((1, 3), "float32"))
    assert marker.exists()
