"""`model.preprocessor(x, y=None, sample_weight=None)` as keras-hub's preprocessor layers:
the model's inputs dict for raw texts, `(inputs, labels)` with labels, and the masked
training triple for a masked-LM; what it returns, the model takes as it is."""

import keras
import numpy as np
import pytest

from inference_helpers import save_tiny_preset
from kbert.models import BertClassifier
from kbert.models import BertMaskedLM
from kbert.models import BertPretrainer
from kbert.models import BertQuestionAnswerer

TEXTS = ["the cat sat", "the dog sat on the mat"]


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    return save_tiny_preset(tmp_path_factory.mktemp("callable") / "pretrainer", 16, BertPretrainer)


def test_a_classifier_preprocessor_returns_the_inputs_the_model_takes(preset):
    model = BertClassifier.from_preset(preset, label_names=["neg", "pos"])
    inputs = model.preprocessor(TEXTS)
    assert set(inputs) == {"token_ids", "segment_ids", "padding_mask"}
    for value in inputs.values():
        assert value.shape == (2, 16)  # padded to sequence_length, as keras-hub's
    assert inputs["padding_mask"].sum(axis=1).tolist() == [5, 8]  # [CLS] ... [SEP], in order
    logits = keras.ops.convert_to_numpy(model(inputs))
    np.testing.assert_allclose(logits, model.predict(TEXTS, verbose=0), atol=1e-5)


def test_labels_and_weights_come_back_packed(preset):
    model = BertClassifier.from_preset(preset, label_names=["neg", "pos"])
    inputs, labels = model.preprocessor(TEXTS, ["pos", "neg"])
    assert inputs["token_ids"].shape == (2, 16)
    assert labels.tolist() == [1, 0]
    _, labels, weights = model.preprocessor(TEXTS, [1, 0], sample_weight=[0.5, 2.0])
    assert labels.tolist() == [1, 0] and weights.tolist() == [0.5, 2.0]
    # One training step on it, as on keras-hub's output.
    model.train_on_batch(*model.preprocessor(TEXTS, ["pos", "neg"]))


def test_a_masked_lm_preprocessor_masks_as_for_training(preset):
    model = BertMaskedLM.from_preset(preset)
    inputs, targets, weights = model.preprocessor(TEXTS)
    assert inputs["mask_positions"].shape == targets.shape == weights.shape
    assert weights.sum() > 0
    assert keras.ops.convert_to_numpy(model(inputs)).shape[:2] == targets.shape


def test_a_question_answerer_preprocessor_reads_questions_and_contexts(preset):
    model = BertQuestionAnswerer.from_preset(preset)
    inputs = model.preprocessor({"question": ["where sat the cat"], "context": ["on the mat"]})
    assert inputs["token_ids"].shape == (1, 16)
    start_logits, _ = (keras.ops.convert_to_numpy(value) for value in model(inputs).values())
    assert start_logits.shape == (1, 16)
