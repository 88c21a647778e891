"""The token classifier's loss: Keras' ignore-class cross-entropy, or with weights that
carry the global batch's normalisation (tests/test_data_parallel_finetuning.py runs it
over two devices on JAX and TensorFlow)."""

import keras
import numpy as np
import pytest

from kbert.training.token_cross_entropy import TokenCrossEntropy

LABELS = np.array([[1, 0, -100, -100], [2, -100, 1, -100], [-100] * 4])
LOGITS = np.random.default_rng(0).normal(size=(3, 4, 3)).astype("float32")


def _keras_loss(labels, logits):
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-100)
    return float(loss(labels, logits))


def test_without_weights_it_is_keras_mean_over_the_labelled_tokens():
    found = float(TokenCrossEntropy()(LABELS, LOGITS))
    np.testing.assert_allclose(found, _keras_loss(LABELS, LOGITS), rtol=1e-6)
    logits = np.zeros((1, 2, 2), "float32")
    assert float(TokenCrossEntropy()(np.array([[1, -100]]), logits)) == pytest.approx(np.log(2))
    assert float(TokenCrossEntropy()(np.array([[-100, -100]]), logits)) == 0.0


def test_weights_carry_the_normalisation_so_batch_parts_add_up_to_the_whole():
    # Weights (B * L) / labelled on labelled tokens, as BucketedDataset gives them under
    # data parallelism: the whole batch's loss is Keras' mean...
    labelled = LABELS != -100
    weights = labelled * (LABELS.size / labelled.sum())
    whole = float(TokenCrossEntropy()(LABELS, LOGITS, sample_weight=weights))
    np.testing.assert_allclose(whole, _keras_loss(LABELS, LOGITS), rtol=1e-6)
    # ...and each part of it (a replica's rows) sums its share: the parts' losses,
    # each over its own slots, add up to it once weighed by their rows.
    loss = TokenCrossEntropy()
    parts = [
        float(loss(LABELS[rows], LOGITS[rows], sample_weight=weights[rows])) * len(rows)
        for rows in ([0], [1, 2])
    ]
    np.testing.assert_allclose(sum(parts) / len(LABELS), whole, rtol=1e-6)
    # Keras' loss renormalises each part by its own labelled tokens instead.
    keras_parts = [_keras_loss(LABELS[rows], LOGITS[rows]) * len(rows) for rows in ([0], [1, 2])]
    assert abs(sum(keras_parts) / len(LABELS) - whole) > 1e-3


def test_it_round_trips_through_keras_serialisation():
    loss = TokenCrossEntropy(ignore_class=-1, name="tags")
    restored = keras.losses.deserialize(keras.losses.serialize(loss))
    assert isinstance(restored, TokenCrossEntropy)
    assert (restored.ignore_class, restored.name) == (-1, "tags")
