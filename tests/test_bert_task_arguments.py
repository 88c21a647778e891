"""`fit`, `evaluate` and `predict` of the task models hand Keras every argument in its
own slot: by keyword or in Keras' positional order, with tensors or raw strings."""

import keras
import numpy as np
import pytest

from inference_helpers import VOCABULARY
from inference_helpers import make_tokenizer
from model_helpers import TINY
from kbert.models import BertBackbone
from kbert.models import BertClassifier

TEXTS = ["the cat sat on the mat", "a dog ran", "who is the cat", "paris is a city of france"]
LABELS = np.array([0, 1, 0, 1])
TOLERANCE = 1e-5


class BatchCounter(keras.callbacks.Callback):
    """The training batches of every epoch, and the epochs Keras numbered."""

    def __init__(self):
        super().__init__()
        self.batches, self.epochs = [], []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append(epoch)
        self.batches.append(0)

    def on_train_batch_end(self, batch, logs=None):
        self.batches[-1] += 1


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    backbone = BertBackbone(**dict(TINY, vocabulary_size=len(VOCABULARY), max_positions=32))
    model = BertClassifier(backbone, num_classes=2)
    model.tokenizer = make_tokenizer(tmp_path_factory.mktemp("arguments"), max_length=32)
    model.compile()
    return model


@pytest.fixture(scope="module")
def tensors(model):
    """Eight tokenized examples (the texts twice) and their labels."""
    return model.tokenizer(TEXTS * 2), np.concatenate([LABELS, LABELS])


def test_fit_takes_keras_arguments_by_keyword_and_in_keras_order(model, tensors, capsys):
    inputs, labels = tensors
    by_keyword, in_order = BatchCounter(), BatchCounter()
    histories = [
        model.fit(
            inputs, labels, batch_size=3, epochs=3, verbose=0, callbacks=[by_keyword],
            validation_data=(inputs, labels), initial_epoch=1, validation_freq=2,
        ),
        # keras.Model.fit's positional order, up to `validation_freq`.
        model.fit(
            inputs, labels, 3, 3, 0, [in_order], 0.0, (inputs, labels), True, None, None, 1,
            None, None, None, 2,
        ),
    ]
    for history, counter in zip(histories, (by_keyword, in_order)):
        assert history.epoch == [1, 2] and counter.epochs == [1, 2]  # from `initial_epoch`
        assert counter.batches == [3, 3]  # 8 examples in batches of 3
        assert len(history.history["loss"]) == 2
        assert len(history.history["val_loss"]) == 1  # validated every second epoch
    assert capsys.readouterr().out == ""  # verbose=0


def test_fit_on_raw_strings_takes_the_same_keras_arguments(model, capsys):
    counter = BatchCounter()
    history = model.fit(
        TEXTS, LABELS, batch_size=2, epochs=3, verbose=0, callbacks=[counter],
        validation_data=(TEXTS[:2], LABELS[:2]), initial_epoch=1,
    )
    assert history.epoch == [1, 2] and counter.batches == [2, 2]
    assert len(history.history["val_loss"]) == 2
    assert capsys.readouterr().out == ""


def test_evaluate_takes_steps_and_return_dict_in_their_slots(model, tensors):
    inputs, labels = tensors
    first_batch = {name: value[:3] for name, value in inputs.items()}
    expected = model.evaluate(first_batch, labels[:3], verbose=0, return_dict=True)
    assert set(expected) == {"loss", "accuracy"}
    by_keyword = model.evaluate(
        inputs, labels, batch_size=3, verbose=0, steps=1, return_dict=True
    )
    in_order = model.evaluate(inputs, labels, 3, 0, None, 1, None, True)
    for scores in (by_keyword, in_order):
        assert scores["loss"] == pytest.approx(expected["loss"], abs=TOLERANCE)
    raw = model.evaluate(TEXTS, LABELS, verbose=0, return_dict=True)
    assert set(raw) == {"loss", "accuracy"}


def test_predict_takes_steps_in_its_slot(model, tensors):
    inputs, _ = tensors
    everything = model.predict(inputs, batch_size=3, verbose=0)
    assert everything.shape == (8, 2)
    by_keyword = model.predict(inputs, batch_size=3, verbose=0, steps=2)
    in_order = model.predict(inputs, 3, 0, 2)
    for logits in (by_keyword, in_order):
        np.testing.assert_allclose(logits, everything[:6], atol=TOLERANCE)
    with pytest.raises(ValueError, match="steps=2"):
        model.predict(TEXTS, steps=2)
