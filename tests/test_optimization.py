"""The fine-tuning optimiser: schedule, weight decay exclusions, accumulation, precision."""

import keras
import numpy as np
import pytest

from kbert.training.optimization import LinearWarmupDecay
from kbert.training.optimization import create_optimizer
from kbert.training.optimization import precision_policy


def _value(schedule, step):
    return float(keras.ops.convert_to_numpy(schedule(step)))


def test_schedule_warms_up_then_decays_linearly_to_zero():
    schedule = LinearWarmupDecay(1e-3, warmup_steps=10, total_steps=110)
    assert _value(schedule, 0) == 0.0
    assert _value(schedule, 5) == pytest.approx(5e-4)
    assert _value(schedule, 10) == pytest.approx(1e-3)
    assert _value(schedule, 60) == pytest.approx(5e-4)
    assert _value(schedule, 110) == 0.0
    assert _value(schedule, 500) == 0.0


def test_schedule_counts_updates_under_gradient_accumulation():
    schedule = LinearWarmupDecay(
        1e-3, warmup_steps=10, total_steps=110, gradient_accumulation_steps=4
    )
    # Keras passes the batch counter: batches 20..23 belong to update 5.
    assert [_value(schedule, step) for step in (20, 23)] == pytest.approx([5e-4, 5e-4])
    assert _value(schedule, 24) == pytest.approx(6e-4)


def test_schedule_without_warmup_starts_at_the_peak():
    assert _value(LinearWarmupDecay(2e-5, warmup_steps=0, total_steps=4), 0) == pytest.approx(2e-5)


def test_schedule_serialises():
    schedule = LinearWarmupDecay(
        3e-5, warmup_steps=7, total_steps=70, gradient_accumulation_steps=2
    )
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(schedule))
    assert isinstance(restored, LinearWarmupDecay)
    assert restored.get_config() == schedule.get_config()
    optimizer = create_optimizer(total_steps=70, learning_rate=3e-5)
    config = keras.optimizers.serialize(optimizer)
    assert isinstance(keras.optimizers.deserialize(config)._learning_rate, LinearWarmupDecay)


@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(learning_rate=0.0, warmup_steps=0, total_steps=1), "learning_rate"),
        (dict(learning_rate=1e-3, warmup_steps=5, total_steps=4), "warmup_steps"),
        (dict(learning_rate=1e-3, warmup_steps=0, total_steps=0), "total_steps"),
    ],
)
def test_schedule_rejects_bad_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        LinearWarmupDecay(**arguments)


def test_create_optimizer_rejects_bad_arguments():
    with pytest.raises(ValueError, match="warmup_ratio"):
        create_optimizer(10, warmup_ratio=1.5)
    with pytest.raises(ValueError, match="clip_norm"):
        create_optimizer(10, clip_norm=0)
    with pytest.raises(ValueError, match="gradient_accumulation_steps"):
        create_optimizer(10, gradient_accumulation_steps=0)


def _dense_layer_norm_model():
    inputs = keras.Input((3,))
    hidden = keras.layers.Dense(4, name="dense")(inputs)
    outputs = keras.layers.LayerNormalization(name="layer_norm")(hidden)
    return keras.Model(inputs, outputs)


def test_weight_decay_skips_layer_norm_and_biases():
    model = _dense_layer_norm_model()
    for variable in model.trainable_variables:
        variable.assign(np.ones(variable.shape, "float32"))
    optimizer = create_optimizer(
        total_steps=10, learning_rate=0.1, warmup_ratio=0.0, weight_decay=0.5, clip_norm=None
    )
    zeros = [keras.ops.zeros(variable.shape) for variable in model.trainable_variables]
    optimizer.apply_gradients(zip(zeros, model.trainable_variables))
    values = {v.path: keras.ops.convert_to_numpy(v) for v in model.trainable_variables}
    # Only the decay moves a weight when the gradient is zero: kernel *= 1 - lr * decay.
    np.testing.assert_allclose(values["dense/kernel"], 0.95, rtol=1e-6)
    for path in ("dense/bias", "layer_norm/gamma", "layer_norm/beta"):
        np.testing.assert_array_equal(values[path], 1.0)


def test_clipping_and_accumulation_are_keras_options():
    optimizer = create_optimizer(100, clip_norm=0.5, gradient_accumulation_steps=4)
    assert optimizer.global_clipnorm == 0.5
    assert optimizer.gradient_accumulation_steps == 4
    assert optimizer.epsilon == 1e-6
    assert create_optimizer(100, gradient_accumulation_steps=1).gradient_accumulation_steps is None


def _trained_weights(batch_size, accumulation, x, y):
    keras.utils.set_random_seed(7)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(
        optimizer=create_optimizer(
            total_steps=1,
            learning_rate=0.1,
            warmup_ratio=0.0,
            gradient_accumulation_steps=accumulation,
        ),
        loss="mse",
    )
    model.fit(x, y, batch_size=batch_size, epochs=1, shuffle=False, verbose=0)
    return [keras.ops.convert_to_numpy(w) for w in model.trainable_weights]


def test_two_accumulated_half_batches_equal_one_full_batch():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 3)).astype("float32")
    y = rng.normal(size=(8, 2)).astype("float32")
    full = _trained_weights(8, 1, x, y)
    accumulated = _trained_weights(4, 2, x, y)
    for expected, found in zip(full, accumulated):
        np.testing.assert_allclose(found, expected, atol=1e-6)


@pytest.mark.parametrize("precision", ["mixed_bfloat16", "mixed_float16"])
def test_precision_policy_builds_mixed_models_and_restores_the_global_policy(precision):
    with precision_policy(precision):
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="dense")])
    assert keras.mixed_precision.global_policy().name == "float32"
    assert model.get_layer("dense").dtype_policy.name == precision
    model.compile(optimizer=create_optimizer(total_steps=2), loss="mse")
    # Dynamic loss scaling comes with float16 only (bfloat16 has float32's range).
    scaled = isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    assert scaled == (precision == "mixed_float16")
    history = model.fit(np.ones((4, 3)), np.ones((4, 2)), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_precision_policy_rejects_unknown_names():
    with pytest.raises(ValueError, match="precision"):
        with precision_policy("float16"):
            pass


def test_auto_precision_is_bfloat16_on_accelerators_and_float32_on_a_cpu(monkeypatch, caplog):
    from kbert.finetuning import FineTuningConfig
    from kbert.training.optimization import resolve_precision
    from kbert.training import optimization

    from kbert.pretraining.pretraining_config import PretrainingConfig

    assert FineTuningConfig().precision == PretrainingConfig().precision == "auto"
    assert resolve_precision("mixed_float16") == "mixed_float16"
    # This machine computes on its CPU: "auto" keeps the reference models' float32.
    assert resolve_precision("auto") == "float32"
    with caplog.at_level("INFO", logger="kbert.training"):
        with precision_policy("auto") as policy:
            assert keras.mixed_precision.global_policy().name == policy == "float32"
    assert any("auto: float32" in record.getMessage() for record in caplog.records)
    monkeypatch.setattr(optimization, "runs_on_accelerator", lambda: True)
    assert resolve_precision("auto") == "mixed_bfloat16"
    with precision_policy("auto"):
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="dense")])
    assert model.get_layer("dense").dtype_policy.name == "mixed_bfloat16"
    with pytest.raises(ValueError, match="precision='bfloat16'"):
        resolve_precision("bfloat16")
