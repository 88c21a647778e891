"""BertDropout: Keras' dropout everywhere, its mask drawn by JAX's "rbg" generator on JAX."""

import keras
import numpy as np
import pytest

from kbert.layers.bert_dropout import BertDropout

RATE = 0.25
SHAPE = (64, 32, 48)  # 98,304 draws: the kept share is within 0.01 of 1 - RATE


def _outputs(layer, inputs, training=True):
    return keras.ops.convert_to_numpy(layer(inputs, training=training))


def test_a_training_call_drops_the_rate_and_scales_the_rest():
    inputs = np.ones(SHAPE, "float32")
    outputs = _outputs(BertDropout(RATE, seed=1), inputs)
    kept = outputs != 0
    assert abs(kept.mean() - (1 - RATE)) < 0.01
    np.testing.assert_allclose(outputs[kept], 1 / (1 - RATE), rtol=1e-6)


def test_each_call_draws_a_new_mask_and_the_seed_decides_them_all():
    inputs = np.ones(SHAPE, "float32")
    first, second = BertDropout(RATE, seed=7), BertDropout(RATE, seed=7)
    a, b = _outputs(first, inputs), _outputs(first, inputs)
    assert (a != b).mean() > 0.2  # two independent masks differ at ~37.5 % of places
    np.testing.assert_array_equal(_outputs(second, inputs), a)
    np.testing.assert_array_equal(_outputs(second, inputs), b)
    assert (_outputs(BertDropout(RATE, seed=8), inputs) != a).mean() > 0.2


def test_inference_and_rate_zero_pass_the_inputs_through():
    inputs = np.random.default_rng(0).normal(size=(4, 5)).astype("float32")
    np.testing.assert_array_equal(_outputs(BertDropout(RATE, seed=1), inputs, False), inputs)
    np.testing.assert_array_equal(_outputs(BertDropout(0.0), inputs), inputs)


def test_the_mask_follows_the_seed_state_a_checkpoint_restores():
    inputs = np.ones((8, 16), "float32")
    layer = BertDropout(RATE, seed=3)
    _outputs(layer, inputs)
    state = keras.ops.convert_to_numpy(layer.seed_generator.state)
    expected = _outputs(layer, inputs)
    layer.seed_generator.state.assign(state)
    np.testing.assert_array_equal(_outputs(layer, inputs), expected)


@pytest.mark.skipif(keras.backend.backend() == "jax", reason="JAX draws with its rbg keys")
def test_other_backends_draw_keras_own_mask():
    inputs = np.ones((8, 16), "float32")
    ours = BertDropout(RATE, seed=5)
    keras_own = keras.layers.Dropout(RATE, seed=5)
    np.testing.assert_array_equal(_outputs(ours, inputs), _outputs(keras_own, inputs))


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="the rbg mask is JAX's")
def test_on_jax_the_mask_is_not_threefry():
    inputs = np.ones((8, 16), "float32")
    ours = _outputs(BertDropout(RATE, seed=5), inputs)
    keras_own = _outputs(keras.layers.Dropout(RATE, seed=5), inputs)
    assert (ours != keras_own).any()


def test_in_a_compiled_training_step_the_masks_differ_per_step():
    model = keras.Sequential([keras.Input((16,)), BertDropout(0.5, seed=2), keras.layers.Dense(1)])
    # A zero learning rate: the weights stay, so the losses differ by their masks alone.
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    x, y = np.ones((32, 16), "float32"), np.zeros((32, 1), "float32")
    losses = [model.train_on_batch(x, y) for _ in range(3)]
    assert len(set(np.round(losses, 6))) == 3
