"""Heads that read only [CLS] have the last block compute that one row, to the same numbers."""

import keras
import numpy as np
from model_helpers import TINY, make_inputs

from kbert.layers.bert_encoder_block import BertEncoderBlock
from kbert.models.bert_backbone import BertBackbone
from kbert.models.bert_classifier import BertClassifier
from kbert.models.bert_multiple_choice import BertMultipleChoice


def numpy(tensor):
    return keras.ops.convert_to_numpy(tensor)


def test_a_block_computing_the_first_token_gives_the_first_row_of_the_whole():
    block = BertEncoderBlock(
        hidden_size=32, num_heads=4, intermediate_size=37, hidden_dropout=0.0,
        attention_dropout=0.0, name="block",
    )
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 9, 32)).astype("float32")
    padding_mask = np.arange(9)[None, :] < np.array([[9], [5], [2]])
    whole = numpy(block(x, padding_mask))
    first = numpy(block(x, padding_mask, first_token_only=True))
    assert first.shape == (3, 1, 32)
    np.testing.assert_allclose(first[:, 0], whole[:, 0], atol=2e-6)
    assert np.abs(whole[:, 1:] - whole[:, :1]).max() > 0.1  # the other rows differ


def last_block_spy(backbone, monkeypatch):
    """Records the `first_token_only` of each call of the backbone's last block."""
    calls = []
    block = backbone.encoder_blocks[-1]
    original = block.call

    def call(*args, **kwargs):
        calls.append(kwargs.get("first_token_only", False))
        return original(*args, **kwargs)

    monkeypatch.setattr(block, "call", call)
    return calls


def test_the_classifier_computes_cls_alone_in_the_last_block(monkeypatch):
    backbone = BertBackbone(**TINY)
    model = BertClassifier(backbone, num_classes=3)
    inputs = make_inputs(batch_size=4, sequence_length=12)
    expected = numpy(model.get_layer("classifier_head")(backbone(inputs)["pooled_output"]))
    calls = last_block_spy(backbone, monkeypatch)
    logits = numpy(model(inputs))
    assert calls == [True]
    np.testing.assert_allclose(logits, expected, atol=1e-6)
    np.testing.assert_allclose(model.predict(inputs, verbose=0), expected, atol=1e-6)


def test_multiple_choice_computes_each_rows_cls_alone_in_the_last_block(monkeypatch):
    backbone = BertBackbone(**TINY)
    model = BertMultipleChoice(backbone)
    rows = make_inputs(batch_size=6, sequence_length=12)
    inputs = {name: value.reshape(2, 3, 12) for name, value in rows.items()}
    pooled = backbone(rows)["pooled_output"]
    expected = numpy(model.get_layer("choice_head")(pooled)).reshape(2, 3)
    calls = last_block_spy(backbone, monkeypatch)
    logits = numpy(model(inputs))
    assert calls == [True]
    np.testing.assert_allclose(logits, expected, atol=1e-6)


def test_training_steps_through_the_shortened_last_block():
    backbone = BertBackbone(**TINY)
    model = BertClassifier(backbone, num_classes=2)
    x, y = make_inputs(batch_size=4, sequence_length=10), np.array([0, 1, 0, 1])
    model.compile(optimizer=keras.optimizers.Adam(1e-2))
    last_kernel = backbone.encoder_blocks[-1].output_dense.kernel
    before = numpy(last_kernel.value).copy()
    losses = model.fit(x, y, epochs=3, verbose=0).history["loss"]
    assert losses[-1] < losses[0]
    assert np.abs(numpy(last_kernel.value) - before).max() > 0  # the last block learns
