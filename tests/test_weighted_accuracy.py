"""Reported accuracies leave out padding: masked-LM slots with weight 0, ignored tokens."""

import keras
import numpy as np
from model_helpers import TINY, make_inputs

from kbert.models import BertBackbone, BertPretrainer, BertTokenClassifier
from kbert.training import IgnoreClassAccuracy
from kbert.pretraining.pretraining_objective import PretrainingObjective, pretraining_metrics

PREDICTIONS = 6


def pretraining_batch(seed=0):
    """8 instances whose last prediction slots are padding (weight 0, target 0)."""
    inputs = make_inputs(batch_size=8, sequence_length=12, num_masks=PREDICTIONS, seed=seed)
    rng = np.random.default_rng(seed)
    real = np.array([6, 5, 4, 3, 2, 1, 6, 2])
    weights = (np.arange(PREDICTIONS)[None, :] < real[:, None]).astype("float32")
    mask_ids = np.where(weights > 0, rng.integers(5, 97, size=weights.shape), 0).astype("int32")
    return {
        **inputs,
        "mask_ids": mask_ids,
        "mask_weights": weights,
        "nsp_labels": rng.integers(0, 2, size=8).astype("int32"),
    }


def expected_accuracies(pretrainer, batch):
    outputs = pretrainer.predict_on_batch(
        {name: batch[name] for name in ("token_ids", "segment_ids", "padding_mask", "mask_positions")}
    )
    hits = np.asarray(outputs["mlm_logits"]).argmax(-1) == batch["mask_ids"]
    weights = batch["mask_weights"]
    mlm = float((hits * weights).sum() / weights.sum())
    nsp = float((np.asarray(outputs["nsp_logits"]).argmax(-1) == batch["nsp_labels"]).mean())
    return mlm, nsp, float(hits.mean())


def trained_pretrainer(batch):
    """A pretrainer fitted a little to `batch`, so that it predicts some targets right."""
    pretrainer = BertPretrainer(BertBackbone(**TINY))
    pretrainer.compile(optimizer=keras.optimizers.Adam(1e-2))
    pretrainer.fit(
        {name: batch[name] for name in ("token_ids", "segment_ids", "padding_mask", "mask_positions")},
        {"mlm_logits": batch["mask_ids"], "nsp_logits": batch["nsp_labels"]},
        sample_weight={"mlm_logits": batch["mask_weights"], "nsp_logits": np.ones(8, "float32")},
        epochs=15,
        batch_size=8,
        verbose=0,
    )
    return pretrainer


def test_pretraining_objective_mlm_accuracy_leaves_out_padded_slots():
    batch = pretraining_batch()
    pretrainer = trained_pretrainer(batch)
    mlm, nsp, unweighted = expected_accuracies(pretrainer, batch)
    # The fitted model gets real targets right and the padded slots (target 0) wrong,
    # so counting the padding would change the figure.
    assert mlm > 0.3 and abs(mlm - unweighted) > 0.05
    objective = PretrainingObjective(pretrainer)
    objective.compile_objective(keras.optimizers.Adam(1e-3))
    logs = objective.evaluate(batch, verbose=0, return_dict=True, batch_size=8)
    scores = pretraining_metrics(logs)
    np.testing.assert_allclose(scores["mlm_accuracy"], mlm, atol=1e-6)
    np.testing.assert_allclose(scores["nsp_accuracy"], nsp, atol=1e-6)


def test_pretrainer_default_compile_weights_mlm_accuracy():
    batch = pretraining_batch(seed=1)
    pretrainer = trained_pretrainer(batch)
    mlm, nsp, unweighted = expected_accuracies(pretrainer, batch)
    assert abs(mlm - unweighted) > 0.05
    logs = pretrainer.evaluate(
        {name: batch[name] for name in ("token_ids", "segment_ids", "padding_mask", "mask_positions")},
        {"mlm_logits": batch["mask_ids"], "nsp_logits": batch["nsp_labels"]},
        sample_weight={"mlm_logits": batch["mask_weights"], "nsp_logits": np.ones(8, "float32")},
        batch_size=8,
        verbose=0,
        return_dict=True,
    )
    np.testing.assert_allclose(logs["mlm_logits_accuracy"], mlm, atol=1e-6)
    np.testing.assert_allclose(logs["nsp_logits_accuracy"], nsp, atol=1e-6)


def test_token_classifier_accuracy_ignores_minus_100_labels():
    inputs = make_inputs(batch_size=4, sequence_length=10, seed=2)
    classifier = BertTokenClassifier(BertBackbone(**TINY), num_classes=3)
    classifier.compile()
    logits = np.asarray(classifier.predict_on_batch(inputs))
    predicted = logits.argmax(-1)
    # Labels: the prediction on half of the real tokens, another class on the rest,
    # -100 on padding and on every third token.
    rng = np.random.default_rng(0)
    labels = np.where(rng.random(predicted.shape) < 0.5, predicted, (predicted + 1) % 3)
    ignored = (inputs["padding_mask"] == 0) | (np.arange(10)[None, :] % 3 == 2)
    labels = np.where(ignored, -100, labels).astype("int32")
    expected = float((predicted == labels)[~ignored].mean())
    logs = classifier.evaluate(inputs, labels, batch_size=4, verbose=0, return_dict=True)
    np.testing.assert_allclose(logs["accuracy"], expected, atol=1e-6)


def test_ignore_class_accuracy_counts_only_kept_labels_and_multiplies_weights():
    metric = IgnoreClassAccuracy()
    y_true = np.array([[1, 0, -100], [2, -100, -100]])
    y_pred = np.eye(3)[np.array([[1, 1, 0], [2, 0, 0]])]
    metric.update_state(y_true, y_pred)
    np.testing.assert_allclose(float(metric.result()), 2 / 3, atol=1e-6)
    metric.reset_state()
    metric.update_state(y_true, y_pred, sample_weight=np.array([[1.0, 3.0, 1.0], [1.0, 1.0, 1.0]]))
    np.testing.assert_allclose(float(metric.result()), 2 / 5, atol=1e-6)
    clone = IgnoreClassAccuracy.from_config(IgnoreClassAccuracy(ignore_class=7).get_config())
    assert clone.ignore_class == 7
