"""keras-hub presets in and out: keras-hub -> kbert -> keras-hub reproduces the original.

The starting point is a tiny keras-hub `BertMaskedLM` with random weights (LayerNorms
and biases included) saved with keras-hub's own `save_to_preset`.
"""

import json
import logging

import keras
import numpy as np
import pytest

from kbert.checkpoints import convert
from kbert.checkpoints import export_keras_hub
from kbert.cli import main
from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.models import BertMaskedLM
from kbert.models.preset_loading import load_checkpoint
from kbert.tokenizer.bert_tokenizer import BertTokenizer

keras_hub = pytest.importorskip("keras_hub")

TOLERANCE = 1e-4
# keras-hub's masked-LM head uses exact GELU and LayerNorm epsilon 1e-5, kbert's head the
# encoder's tanh GELU and 1e-12: the imported head's logits differ by about this much.
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"word{i}" for i in range(45)]
SIZE = dict(num_layers=2, num_heads=4, hidden_dim=32, intermediate_dim=37, max_sequence_length=24)
MASK_POSITIONS = np.array([[1, 4, 8], [0, 2, 5]], dtype="int32")


def randomize(model, seed):
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        noise = rng.normal(size=variable.shape).astype("float32") * 0.2
        variable.assign(noise + 1.0 if variable.path.endswith("gamma") else noise)


def batch():
    rng = np.random.default_rng(2)
    padding_mask = np.array([[1] * 10, [1] * 6 + [0] * 4], dtype="int32")
    return {
        "token_ids": (rng.integers(5, len(VOCABULARY), (2, 10)) * padding_mask).astype("int32"),
        "segment_ids": np.array([[0] * 5 + [1] * 5, [0] * 3 + [1] * 3 + [0] * 4], dtype="int32"),
        "padding_mask": padding_mask,
    }


def numpy(value):
    return keras.ops.convert_to_numpy(value)


def difference(actual, expected, padding_mask=None):
    actual, expected = numpy(actual), numpy(expected)
    if padding_mask is not None:
        actual, expected = actual[padding_mask == 1], expected[padding_mask == 1]
    return float(np.max(np.abs(actual - expected)))


def backbone_differences(outputs, expected, padding_mask):
    return {
        "sequence_output": difference(
            outputs["sequence_output"], expected["sequence_output"], padding_mask
        ),
        "pooled_output": difference(outputs["pooled_output"], expected["pooled_output"]),
    }


@pytest.fixture(scope="module")
def keras_hub_preset(tmp_path_factory):
    """A keras-hub BertMaskedLM preset folder and its outputs on `batch()`."""
    backbone = keras_hub.models.BertBackbone(vocabulary_size=len(VOCABULARY), dropout=0.0, **SIZE)
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY, lowercase=True)
    preprocessor = keras_hub.models.BertMaskedLMPreprocessor(tokenizer, sequence_length=16)
    masked_lm = keras_hub.models.BertMaskedLM(backbone, preprocessor=preprocessor)
    randomize(masked_lm, seed=0)
    folder = tmp_path_factory.mktemp("keras_hub") / "bert_tiny_masked_lm"
    masked_lm.save_to_preset(str(folder))
    inputs = batch()
    expected = {
        "backbone": {key: numpy(value) for key, value in backbone(inputs).items()},
        "mlm_logits": numpy(masked_lm({**inputs, "mask_positions": MASK_POSITIONS})),
    }
    return folder, expected


def test_keras_hub_preset_converts_with_its_masked_lm_head(tmp_path, keras_hub_preset):
    folder, expected = keras_hub_preset
    convert(folder, tmp_path / "preset")
    assert json.loads((tmp_path / "preset" / "metadata.json").read_text())["source"] == "keras-hub"
    model = BertMaskedLM.from_preset(tmp_path / "preset")
    assert model.freshly_initialized_heads == []
    assert model.backbone.bert_config.activation == "gelu_approximate"

    inputs = batch()
    differences = backbone_differences(
        model.backbone(inputs), expected["backbone"], inputs["padding_mask"]
    )
    head_difference = difference(
        model({**inputs, "mask_positions": MASK_POSITIONS}), expected["mlm_logits"]
    )
    print(f"keras-hub import: backbone {differences}, mlm_logits {head_difference:.2e}")
    assert max(differences.values()) < TOLERANCE, differences
    assert head_difference < TOLERANCE
    assert (model.head_activation, model.head_layer_norm_epsilon) == ("gelu", 1e-5)

    # The tokenizer keeps keras-hub's vocabulary and casing.
    assert model.tokenizer.vocabulary == VOCABULARY
    assert model.tokenizer.lowercase is True
    assert model.tokenizer.strip_accents is False


def test_keras_hub_to_kbert_to_keras_hub_reproduces_the_original(
    tmp_path, keras_hub_preset, capsys
):
    folder, expected = keras_hub_preset
    convert(folder, tmp_path / "preset")
    assert (
        main(["export", str(tmp_path / "preset"), str(tmp_path / "out"), "--format", "keras-hub"])
        == 0
    )
    assert capsys.readouterr().out.strip() == str((tmp_path / "out").resolve())

    inputs = batch()
    backbone = keras_hub.models.BertBackbone.from_preset(str(tmp_path / "out"))
    differences = backbone_differences(
        backbone(inputs), expected["backbone"], inputs["padding_mask"]
    )
    masked_lm = keras_hub.models.BertMaskedLM.from_preset(str(tmp_path / "out"))
    differences["mlm_logits"] = difference(
        masked_lm({**inputs, "mask_positions": MASK_POSITIONS}), expected["mlm_logits"]
    )
    print(f"keras-hub round trip max differences: {differences}")
    assert max(differences.values()) < TOLERANCE, differences
    # The exported preprocessor tokenizes as the original did.
    tokenizer = masked_lm.preprocessor.tokenizer
    assert tokenizer.get_vocabulary() == VOCABULARY
    assert tokenizer.lowercase is True


def test_kbert_models_export_to_keras_hub_with_the_same_outputs(tmp_path):
    tokenizer = BertTokenizer(VOCABULARY, lowercase=False, max_length=24)
    backbone = BertBackbone(
        vocabulary_size=len(VOCABULARY),
        hidden_size=32,
        num_layers=2,
        num_heads=4,
        intermediate_size=37,
        max_positions=24,
        activation="gelu_approximate",
    )
    classifier = BertClassifier(
        backbone, label_names=["negative", "neutral", "positive"], dropout=0.0
    )
    randomize(classifier, seed=1)
    classifier.tokenizer = tokenizer
    inputs = batch()
    export_keras_hub(classifier, tmp_path / "classifier")

    hub_backbone = keras_hub.models.BertBackbone.from_preset(str(tmp_path / "classifier"))
    hub_classifier = keras_hub.models.BertTextClassifier.from_preset(str(tmp_path / "classifier"))
    differences = backbone_differences(
        hub_backbone(inputs), backbone(inputs), inputs["padding_mask"]
    )
    differences["logits"] = difference(hub_classifier(inputs), classifier(inputs))
    assert max(differences.values()) < TOLERANCE, differences
    assert hub_classifier.preprocessor.tokenizer.lowercase is False

    # ... and the keras-hub classifier converts back to the same kbert classifier.
    model, _, _ = load_checkpoint(tmp_path / "classifier")
    assert isinstance(model, BertClassifier) and model.num_classes == 3
    assert difference(model(inputs), classifier(inputs)) < TOLERANCE


def test_exact_gelu_models_export_with_a_warning(tmp_path, caplog):
    backbone = BertBackbone(
        vocabulary_size=len(VOCABULARY),
        hidden_size=32,
        num_layers=1,
        num_heads=4,
        intermediate_size=37,
        max_positions=24,
    )
    with caplog.at_level(logging.WARNING, logger="kbert.checkpoints"):
        export_keras_hub(backbone, tmp_path / "out")
    assert "tanh approximation" in caplog.text
    assert keras_hub.models.BertBackbone.from_preset(str(tmp_path / "out")).num_layers == 1

    relu = BertBackbone(
        vocabulary_size=len(VOCABULARY),
        hidden_size=32,
        num_layers=1,
        num_heads=4,
        intermediate_size=37,
        max_positions=24,
        activation="relu",
    )
    with pytest.raises(ValueError, match="activation='relu' cannot be exported"):
        export_keras_hub(relu, tmp_path / "relu")
    assert not (tmp_path / "relu").exists()
    # Without --overwrite an existing export stays.
    with pytest.raises(ValueError, match="not empty"):
        export_keras_hub(backbone, tmp_path / "out")
