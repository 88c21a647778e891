import logging
import os

import h5py
import numpy as np
import pytest
from model_helpers import TINY, make_inputs

from kbert.models import (
    BertBackbone,
    BertClassifier,
    BertMaskedLM,
    BertPretrainer,
    BertQuestionAnswerer,
)
from kbert.presets import resolve_preset
from kbert.checkpoints.weights_file import read_weights, write_weights


def test_pretrainer_preset_round_trip_and_head_reuse(tmp_path):
    model = BertPretrainer(BertBackbone(**TINY))
    inputs = make_inputs(num_masks=2)
    model.save_to_preset(tmp_path / "p")
    assert sorted(os.listdir(tmp_path / "p")) == ["config.json", "metadata.json", "model.weights.h5"]

    restored = BertPretrainer.from_preset(tmp_path / "p")
    assert restored.freshly_initialized_heads == []
    for key, value in model.predict(inputs, verbose=0).items():
        np.testing.assert_allclose(restored.predict(inputs, verbose=0)[key], value, atol=1e-6)

    # The masked-LM head of a pretraining preset serves BertMaskedLM as is.
    masked_lm = BertMaskedLM.from_preset(tmp_path / "p")
    assert masked_lm.freshly_initialized_heads == []
    np.testing.assert_allclose(
        masked_lm.predict(inputs, verbose=0),
        model.predict(inputs, verbose=0)["mlm_logits"],
        atol=1e-6,
    )
    backbone = BertBackbone.from_preset(str(tmp_path / "p"))
    plain = {k: v for k, v in inputs.items() if k != "mask_positions"}
    np.testing.assert_allclose(
        backbone.predict(plain, verbose=0)["sequence_output"],
        model.backbone.predict(plain, verbose=0)["sequence_output"],
        atol=1e-6,
    )


def test_missing_head_is_named(tmp_path, caplog):
    BertPretrainer(BertBackbone(**TINY)).save_to_preset(tmp_path / "p")
    with caplog.at_level(logging.WARNING, logger="kbert"):
        model = BertQuestionAnswerer.from_preset(tmp_path / "p")
    assert model.freshly_initialized_heads == ["span_head"]
    assert "head `span_head` is freshly initialised" in caplog.text
    assert "BertPretrainer" in caplog.text


def test_classifier_preset_keeps_labels_and_reinitialises_on_new_class_count(tmp_path, caplog):
    model = BertClassifier(BertBackbone(**TINY), label_names=["neg", "neu", "pos"])
    model.save_to_preset(tmp_path / "c")
    restored = BertClassifier.from_preset(tmp_path / "c")
    assert restored.label_names == ["neg", "neu", "pos"]
    assert restored.freshly_initialized_heads == []
    with caplog.at_level(logging.WARNING, logger="kbert"):
        binary = BertClassifier.from_preset(tmp_path / "c", label_names=None, num_classes=2)
    assert binary.freshly_initialized_heads == ["classifier_head"]
    assert "(3,) in the preset, (2,) in the model" in caplog.text


def test_resaving_replaces_atomically_and_leaves_no_temporary_files(tmp_path):
    first = BertBackbone(**TINY)
    first.save_to_preset(tmp_path / "p")
    second = BertBackbone(**TINY)
    second.save_to_preset(tmp_path / "p")
    assert sorted(os.listdir(tmp_path)) == ["p"]
    loaded = BertBackbone.from_preset(tmp_path / "p")
    np.testing.assert_array_equal(
        np.asarray(loaded.token_embedding.embeddings), np.asarray(second.token_embedding.embeddings)
    )


def test_refuses_to_overwrite_a_folder_that_is_not_a_preset(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("precious")
    with pytest.raises(ValueError, match="not empty and not a kbert preset"):
        BertBackbone(**TINY).save_to_preset(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "precious"
    # A Hugging Face folder has a config.json too; it is not ours to replace.
    (tmp_path / "mine" / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(ValueError, match="not empty and not a kbert preset"):
        BertBackbone(**TINY).save_to_preset(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "precious"


def test_failed_save_leaves_old_preset_and_no_stray_files(tmp_path, monkeypatch):
    BertBackbone(**TINY).save_to_preset(tmp_path / "p")
    before = (tmp_path / "p" / "model.weights.h5").read_bytes()

    import kbert.checkpoints.kbert_preset as writer

    def crash(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(writer, "write_weights", crash)
    with pytest.raises(RuntimeError, match="disk full"):
        BertBackbone(**TINY).save_to_preset(tmp_path / "p")
    assert sorted(os.listdir(tmp_path)) == ["p"]
    assert (tmp_path / "p" / "model.weights.h5").read_bytes() == before


def test_resolve_preset_errors(tmp_path):
    with pytest.raises(ValueError, match="Unknown preset 'no-such-model'"):
        resolve_preset("no-such-model")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="must be a folder"):
        resolve_preset(tmp_path / "file")
    with pytest.raises(ValueError, match="is not a model folder.*`kbert convert --help`"):
        BertBackbone.from_preset(tmp_path)


def test_preset_with_wrong_backbone_shape_is_an_error(tmp_path):
    BertBackbone(**TINY).save_to_preset(tmp_path / "p")
    path = tmp_path / "p" / "model.weights.h5"
    weights = read_weights(path)
    weights["backbone/pooler/dense/bias"] = np.zeros((5,), "float32")
    write_weights(path, weights)
    with pytest.raises(ValueError, match=r"`pooler/dense/bias` has shape \(5,\).*expects \(32,\)"):
        BertBackbone.from_preset(tmp_path / "p")


def test_weights_file_refuses_external_links(tmp_path):
    secret = tmp_path / "secret.h5"
    with h5py.File(secret, "w") as handle:
        handle["data"] = np.arange(4.0)
    hostile = tmp_path / "hostile.h5"
    with h5py.File(hostile, "w") as handle:
        handle["backbone/a"] = np.zeros(3)
        handle["backbone/b"] = h5py.ExternalLink(str(secret), "/data")
    with pytest.raises(ValueError, match="external link"):
        read_weights(hostile)


def test_weights_file_refuses_oversized_and_virtual_datasets(tmp_path):
    big = tmp_path / "big.h5"
    with h5py.File(big, "w") as handle:
        handle.create_dataset("huge", shape=(10**9,), dtype="float32")  # declared, never written
    with pytest.raises(ValueError, match="declares 4000000000 bytes"):
        read_weights(big)

    source = tmp_path / "source.h5"
    with h5py.File(source, "w") as handle:
        handle["data"] = np.arange(4.0)
    layout = h5py.VirtualLayout(shape=(4,), dtype="float64")
    layout[:] = h5py.VirtualSource(str(source), "data", shape=(4,))
    virtual = tmp_path / "virtual.h5"
    with h5py.File(virtual, "w") as handle:
        handle.create_virtual_dataset("v", layout)
    with pytest.raises(ValueError, match="virtual dataset"):
        read_weights(virtual)


def test_masked_lm_head_settings_survive_presets_and_task_changes(tmp_path):
    pretrainer = BertPretrainer(
        BertBackbone(**TINY), head_activation="relu", head_layer_norm_epsilon=1e-5
    )
    pretrainer.save_to_preset(tmp_path / "p")
    masked_lm = BertMaskedLM.from_preset(tmp_path / "p")
    assert (masked_lm.head_activation, masked_lm.head_layer_norm_epsilon) == ("relu", 1e-5)
    inputs = make_inputs(num_masks=2)
    np.testing.assert_allclose(
        masked_lm.predict(inputs, verbose=0),
        pretrainer.predict(inputs, verbose=0)["mlm_logits"],
        atol=1e-6,
    )
    # Defaults follow the backbone, as in BERT.
    plain = BertMaskedLM(BertBackbone(**TINY))
    assert (plain.head_activation, plain.head_layer_norm_epsilon) == ("gelu", 1e-12)
