"""`cls.from_preset` honours its class: subclasses, the class a preset holds, `dtype` and
`load_weights`; the loader imports no model class (it receives the class). A preset's own
weights come from the file (their random draws skipped) and a head it lacks is drawn."""

import json

import keras
import numpy as np
import pytest
from model_helpers import TINY, make_inputs

from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.models import BertMaskedLM
from kbert.models import BertPretrainer
from kbert.models import BertTask


@keras.saving.register_keras_serializable(package="kbert_tests")
class WideBackbone(BertBackbone):
    """A user's backbone subclass, registered under the user's own package."""


@keras.saving.register_keras_serializable(package="kbert_tests")
class SentimentClassifier(BertClassifier):
    """A user's classifier subclass."""


class UnregisteredClassifier(BertClassifier):
    """A subclass Keras cannot find by name: its presets load as kbert's class."""


class AbstractTask(BertTask):
    """An intermediate base without a preprocessor (like BertTask itself)."""


def _config(folder):
    return json.loads((folder / "config.json").read_text())


@pytest.fixture
def classifier_preset(tmp_path):
    model = BertClassifier(BertBackbone(**TINY), label_names=["neg", "pos"])
    model.save_to_preset(tmp_path / "classifier")
    return tmp_path / "classifier"


def test_a_subclass_gets_an_instance_of_itself(classifier_preset):
    backbone = WideBackbone.from_preset(classifier_preset)
    assert type(backbone) is WideBackbone
    model = SentimentClassifier.from_preset(classifier_preset)
    assert type(model) is SentimentClassifier
    assert model.label_names == ["neg", "pos"] and model.freshly_initialized_heads == []
    reference = BertClassifier.from_preset(classifier_preset)
    inputs = make_inputs()
    np.testing.assert_allclose(
        model.predict_on_batch(inputs), reference.predict_on_batch(inputs), atol=1e-6
    )


def test_a_preset_saved_from_a_registered_subclass_comes_back_as_it(tmp_path):
    model = SentimentClassifier(BertBackbone(**TINY), label_names=["neg", "pos"])
    model.save_to_preset(tmp_path / "sentiment")
    config = _config(tmp_path / "sentiment")
    # The weight layout knows kbert's class; the registry knows the exact one.
    assert config["class_name"] == "BertClassifier"
    assert config["registered_name"] == "kbert_tests>SentimentClassifier"
    for loader in (BertTask, BertClassifier, SentimentClassifier):
        assert type(loader.from_preset(tmp_path / "sentiment")) is SentimentClassifier
    # A backbone loaded from it is the class asked for.
    assert type(BertBackbone.from_preset(tmp_path / "sentiment")) is BertBackbone

    WideBackbone(**TINY).save_to_preset(tmp_path / "wide")
    assert type(BertBackbone.from_preset(tmp_path / "wide")) is WideBackbone


def test_an_unregistered_subclass_saves_as_its_kbert_class(tmp_path):
    UnregisteredClassifier(BertBackbone(**TINY), num_classes=2).save_to_preset(tmp_path / "u")
    assert "registered_name" not in _config(tmp_path / "u")
    assert type(BertTask.from_preset(tmp_path / "u")) is BertClassifier
    assert type(UnregisteredClassifier.from_preset(tmp_path / "u")) is UnregisteredClassifier


def test_a_class_keras_does_not_know_is_a_clear_error(classifier_preset):
    config = _config(classifier_preset)
    config["registered_name"] = "somebody_else>GoneClassifier"
    (classifier_preset / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"somebody_else>GoneClassifier.*import the module"):
        BertTask.from_preset(classifier_preset)
    config["registered_name"] = ["not", "a", "name"]
    (classifier_preset / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="`registered_name` must be a string"):
        BertTask.from_preset(classifier_preset)


def test_the_class_held_must_fit_the_class_asked_for(classifier_preset, tmp_path):
    with pytest.raises(ValueError, match="holds a BertClassifier, which is not a AbstractTask"):
        AbstractTask.from_preset(classifier_preset)
    # A concrete class builds its own head on any preset's backbone, as before.
    masked_lm = BertMaskedLM.from_preset(classifier_preset)
    assert type(masked_lm) is BertMaskedLM and masked_lm.freshly_initialized_heads
    config = _config(classifier_preset)
    config["class_name"] = "BertAdamW"  # registered with Keras, but no model
    (classifier_preset / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="not a kbert task model"):
        BertTask.from_preset(classifier_preset)


def test_dtype_reaches_the_backbone(classifier_preset):
    reference = BertBackbone.from_preset(classifier_preset)
    backbone = BertBackbone.from_preset(classifier_preset, dtype="bfloat16")
    assert backbone.dtype_policy.name == "bfloat16"
    embedding = backbone.token_embedding.embeddings
    assert keras.backend.standardize_dtype(embedding.dtype) == "bfloat16"
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(keras.ops.cast(embedding, "float32")),
        keras.ops.convert_to_numpy(reference.token_embedding.embeddings),
        rtol=1e-2,
    )
    # The policy is the model's own too, so a saved model keeps it.
    assert BertBackbone.from_config(backbone.get_config()).dtype_policy.name == "bfloat16"
    model = BertClassifier.from_preset(classifier_preset, dtype="mixed_bfloat16")
    assert model.backbone.dtype_policy.name == "mixed_bfloat16"
    assert model.label_names == ["neg", "pos"]


def test_load_weights_false_builds_the_architecture_only(classifier_preset, caplog):
    loaded = BertClassifier.from_preset(classifier_preset)
    fresh = BertClassifier.from_preset(classifier_preset, load_weights=False)
    assert type(fresh) is BertClassifier and fresh.label_names == ["neg", "pos"]
    assert [w.shape for w in fresh.weights] == [w.shape for w in loaded.weights]
    assert not np.allclose(
        keras.ops.convert_to_numpy(fresh.backbone.token_embedding.embeddings),
        keras.ops.convert_to_numpy(loaded.backbone.token_embedding.embeddings),
    )
    backbone = BertBackbone.from_preset(classifier_preset, load_weights=False)
    assert backbone.bert_config == loaded.backbone.bert_config


def test_from_preset_takes_backbone_constructor_arguments(classifier_preset):
    assert BertBackbone.from_preset(classifier_preset, name="encoder").name == "encoder"


def test_pretrainer_presets_load_as_what_they_hold(tmp_path):
    BertPretrainer(BertBackbone(**TINY)).save_to_preset(tmp_path / "p")
    assert type(BertTask.from_preset(tmp_path / "p")) is BertPretrainer


def test_a_preset_loads_with_its_own_weights_and_a_fresh_head(tmp_path):
    masked_lm = BertMaskedLM(BertBackbone(**TINY))
    masked_lm.save_to_preset(tmp_path / "preset")
    loaded = BertMaskedLM.from_preset(tmp_path / "preset")
    for saved, restored in zip(masked_lm.weights, loaded.weights):
        np.testing.assert_array_equal(
            keras.ops.convert_to_numpy(saved), keras.ops.convert_to_numpy(restored)
        )
    classifier = BertClassifier.from_preset(tmp_path / "preset", num_classes=3)
    assert classifier.freshly_initialized_heads == ["classifier_head"]
    kernel = keras.ops.convert_to_numpy(classifier.get_layer("classifier_head").kernel)
    assert np.abs(kernel).max() > 0  # Drawn, not left at the skipped zeros.
