"""BucketedDataset: shapes, reproducible order, resumable position, and plain `model.fit`."""

import keras
import numpy as np
import pytest
from model_helpers import TINY

from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.models import BertQuestionAnswerer
from kbert.models import BertTokenClassifier
from kbert.preprocessing.bucketed_dataset import BucketedDataset
from kbert.preprocessing.bucketed_dataset import IGNORED_LABEL


def _token_ids(count, seed=0, low=3, high=24):
    rng = np.random.default_rng(seed)
    return [
        rng.integers(5, TINY["vocabulary_size"], size=int(length)).astype("int32")
        for length in rng.integers(low, high + 1, size=count)
    ]


def _epoch(dataset):
    return [dataset[index] for index in range(len(dataset))]


def test_batches_are_padded_to_buckets_with_masks_and_labels():
    token_ids = _token_ids(50)
    labels = np.arange(50)
    dataset = BucketedDataset(token_ids, labels=labels, batch_size=8, buckets=(8, 16, 24))
    seen = []
    for index in range(len(dataset)):
        inputs, y = dataset[index]
        rows = dataset.example_indices(index)
        assert inputs["token_ids"].shape[1] in (8, 16, 24)
        for row, example in enumerate(rows):
            length = len(token_ids[example])
            np.testing.assert_array_equal(inputs["token_ids"][row, :length], token_ids[example])
            assert inputs["token_ids"][row, length:].sum() == 0
            assert inputs["padding_mask"][row].sum() == length
        np.testing.assert_array_equal(y, labels[rows])
        seen.extend(rows.tolist())
    assert sorted(seen) == list(range(50))
    # Leftovers of a bucket join the next one: a single batch per epoch is smaller.
    assert sorted(len(dataset.example_indices(i)) for i in range(len(dataset)))[1:] == [8] * 6


def test_per_token_and_dict_labels_are_padded_like_the_tokens():
    token_ids = _token_ids(10)
    per_token = [np.arange(len(ids)) for ids in token_ids]
    dataset = BucketedDataset(
        token_ids, labels={"tags": per_token, "start": np.arange(10)}, batch_size=4, shuffle=False
    )
    inputs, y = dataset[0]
    rows = dataset.example_indices(0)
    assert y["tags"].shape == inputs["token_ids"].shape
    for row, example in enumerate(rows):
        length = len(token_ids[example])
        np.testing.assert_array_equal(y["tags"][row, :length], per_token[example])
        assert (y["tags"][row, length:] == IGNORED_LABEL).all()
    np.testing.assert_array_equal(y["start"], rows)


def _order(dataset, epoch=None):
    return [dataset.example_indices(i, epoch).tolist() for i in range(len(dataset))]


def test_order_is_a_function_of_seed_and_epoch():
    token_ids = _token_ids(40)
    first = BucketedDataset(token_ids, batch_size=4, seed=3)
    second = BucketedDataset(token_ids, batch_size=4, seed=3)
    second.epoch = 1
    assert _order(second, epoch=0) == _order(first)
    first.on_epoch_end()
    assert first.epoch == 1
    assert _order(first) == _order(second) != _order(first, epoch=0)
    assert _order(BucketedDataset(token_ids, batch_size=4, seed=4)) != _order(first, epoch=0)


def test_an_epoch_view_is_the_rest_of_that_epoch():
    dataset = BucketedDataset(_token_ids(40), batch_size=4, seed=1)
    full = _order(dataset, epoch=2)
    view = dataset.epoch_view(2, start_batch=3)
    assert len(view) == len(full) - 3
    assert [view.example_indices(i).tolist() for i in range(len(view))] == full[3:]
    np.testing.assert_array_equal(view[0][0]["token_ids"], dataset.batch(2, 3)[0]["token_ids"])
    # Keras calls on_epoch_end when fit starts and ends; a view stays where it is.
    view.on_epoch_end()
    assert view.example_indices(0).tolist() == full[3]
    assert len(dataset.epoch_view(2, start_batch=len(full))) == 0
    with pytest.raises(ValueError, match="start_batch"):
        dataset.epoch_view(0, start_batch=len(full) + 1)


def test_the_first_two_batches_differ_in_length_when_the_epoch_has_two():
    # Keras's TensorFlow recipe infers the signature from the first two batches.
    token_ids = _token_ids(30, low=3, high=6) + _token_ids(2, low=20, high=24)
    for seed in range(5):
        dataset = BucketedDataset(token_ids, batch_size=4, buckets=(8, 24), seed=seed)
        for epoch in range(3):
            first, second = dataset.batch(epoch, 0), dataset.batch(epoch, 1)
            assert first[0]["token_ids"].shape[1] != second[0]["token_ids"].shape[1]


def test_predict_returns_rows_in_example_order():
    class SumModel:
        def predict_on_batch(self, inputs):
            return {"sum": inputs["token_ids"].sum(axis=1), "tokens": inputs["token_ids"] * 2}

    token_ids = _token_ids(13)
    dataset = BucketedDataset(token_ids, batch_size=4, shuffle=False)
    outputs = dataset.predict(SumModel())
    assert [int(row["sum"]) for row in outputs] == [int(ids.sum()) for ids in token_ids]
    per_token = dataset.predict(SumModel(), sequence_outputs=True)
    for row, ids in zip(per_token, token_ids):
        np.testing.assert_array_equal(row["tokens"], ids * 2)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="batch_size"):
        BucketedDataset(_token_ids(3), batch_size=0)
    with pytest.raises(ValueError, match="segment_ids"):
        BucketedDataset(_token_ids(3), segment_ids=_token_ids(3, seed=1))
    with pytest.raises(ValueError, match="largest bucket"):
        BucketedDataset(_token_ids(3, low=30, high=30), buckets=(16,))
    with pytest.raises(ValueError, match="one entry per example"):
        BucketedDataset(_token_ids(3), labels=np.zeros(2))


def _fit_losses(model, dataset, epochs):
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    return model.fit(dataset, epochs=epochs, verbose=0).history["loss"]


@pytest.mark.parametrize("task", ["classifier", "token_classifier", "question_answerer"])
def test_model_fit_on_kbert_datasets(task):
    """Plain `model.fit(dataset)` trains every task head, on every backend."""
    # Three full batches. The classifier's come in two lengths (as bucketed data do; on
    # TensorFlow this checks the input signature Keras infers); the other heads' in one,
    # each shape costing a compilation on JAX.
    if task == "classifier":
        token_ids = _token_ids(16, seed=2, low=3, high=8) + _token_ids(8, seed=3, low=9, high=16)
    else:
        token_ids = _token_ids(24, seed=2, low=3, high=8)
    segment_ids = [np.zeros_like(ids) for ids in token_ids]
    backbone = BertBackbone(**dict(TINY, num_layers=1))
    if task == "classifier":
        model = BertClassifier(backbone, num_classes=2)
        labels = np.array([int(ids[0] % 2) for ids in token_ids])
    elif task == "token_classifier":
        model = BertTokenClassifier(backbone, num_classes=3)
        labels = [ids % 3 for ids in token_ids]
        labels[0][-1] = IGNORED_LABEL
    else:
        model = BertQuestionAnswerer(backbone)
        labels = {
            "start_logits": np.array([len(ids) // 2 for ids in token_ids]),
            "end_logits": np.array([len(ids) - 1 for ids in token_ids]),
        }
    dataset = BucketedDataset(token_ids, segment_ids, labels, batch_size=8, buckets=(8, 16))
    losses = _fit_losses(model, dataset, epochs=4)
    assert all(np.isfinite(losses))
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("per_token", [False, True], ids=["per-example", "per-token"])
def test_full_batches_fill_the_smaller_batch_with_rows_that_weigh_nothing(per_token):
    token_ids = _token_ids(19, seed=3)
    labels = (
        [np.arange(len(ids)) % 3 for ids in token_ids] if per_token else np.arange(19) % 3
    )
    plain = BucketedDataset(token_ids, labels=labels, batch_size=8, buckets=(8, 24), seed=1)
    full = BucketedDataset(
        token_ids, labels=labels, batch_size=8, buckets=(8, 24), seed=1, full_batches=True
    )
    model = (BertTokenClassifier if per_token else BertClassifier)(
        BertBackbone(**TINY), num_classes=3, dropout=0.0
    )
    model.compile(optimizer="sgd")
    sizes = []
    for index in range(len(full)):
        inputs, y, weights = full[index]
        sizes.append(len(plain.example_indices(index)))
        assert inputs["token_ids"].shape[0] == 8  # one program per bucket, none smaller
        plain_inputs, plain_y = plain[index]
        expected = model.compute_loss(plain_inputs, plain_y, model(plain_inputs))
        filled = model.compute_loss(inputs, y, model(inputs), sample_weight=weights)
        np.testing.assert_allclose(float(filled), float(expected), rtol=1e-5)
    assert min(sizes) < 8  # the epoch had a smaller batch to fill
