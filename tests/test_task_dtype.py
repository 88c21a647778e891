"""`from_preset(..., dtype=...)` reaches every layer, backbone and head, and the model's
`dtype_policy` says so (as keras-hub's tasks); the logits stay float32."""

import keras
import numpy as np
import pytest

from inference_helpers import save_tiny_preset
from kbert.models import BertClassifier
from kbert.models import BertMaskedLM
from kbert.models import BertMultipleChoice
from kbert.models import BertPretrainer
from kbert.models import BertQuestionAnswerer
from kbert.models import BertTokenClassifier

TASKS = {
    BertClassifier: {"num_classes": 2},
    BertTokenClassifier: {"num_classes": 3},
    BertQuestionAnswerer: {},
    BertMultipleChoice: {},
    BertMaskedLM: {},
    BertPretrainer: {},
}


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    folder = tmp_path_factory.mktemp("task_dtype")
    save_tiny_preset(folder / "pretrainer", 16, BertPretrainer)
    save_tiny_preset(folder / "classifier", 16, BertClassifier, num_classes=2)
    return folder


def all_layers(model):
    """The model's layers, and those of the models inside it (the backbone), but its
    inputs (integer ids, whatever the policy)."""
    for layer in model.layers:
        if isinstance(layer, keras.layers.InputLayer):
            continue
        yield layer
        if isinstance(layer, keras.Model):
            yield from all_layers(layer)


@pytest.mark.parametrize("dtype", ["bfloat16", "mixed_bfloat16"])
@pytest.mark.parametrize("task_class", list(TASKS), ids=lambda cls: cls.__name__)
def test_dtype_reaches_every_layer_and_the_policy(preset, task_class, dtype):
    model = task_class.from_preset(preset / "pretrainer", dtype=dtype, **TASKS[task_class])
    assert model.dtype_policy.name == dtype
    policies = {layer.name: layer.dtype_policy.name for layer in all_layers(model)}
    assert set(policies.values()) == {dtype}, policies
    variable_dtype = "bfloat16" if dtype == "bfloat16" else "float32"
    assert {variable.dtype for variable in model.weights} == {variable_dtype}


def test_a_bfloat16_classifier_keeps_its_head_weights_and_float32_logits(preset):
    reference = BertClassifier.from_preset(preset / "classifier")
    model = BertClassifier.from_preset(preset / "classifier", dtype="bfloat16")
    head = model.get_layer("classifier_head")
    assert head.compute_dtype == head.kernel.dtype == "bfloat16"
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(keras.ops.cast(head.kernel, "float32")),
        keras.ops.convert_to_numpy(reference.get_layer("classifier_head").kernel),
        rtol=1e-2,
        atol=1e-2,
    )
    logits = model.predict(["the cat sat", "the dog"], verbose=0)
    assert logits.dtype == np.float32
    expected = reference.predict(["the cat sat", "the dog"], verbose=0)
    np.testing.assert_allclose(logits, expected, atol=0.1)
