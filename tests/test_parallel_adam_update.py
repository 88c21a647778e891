"""BertAdamW updates every variable at once on PyTorch, to the same values as one at a time."""

import keras
import numpy as np
import pytest

from kbert.training import parallel_adam_update
from kbert.training.bert_adamw import BertAdamW

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "torch", reason="the all-at-once update is PyTorch's"
)


SHAPES = (((4, 3), "kernel"), ((3,), "bias"), ((5,), "gamma"))
DECAYED = (True, False, False)


def starts_and_gradients(steps):
    rng = np.random.default_rng(0)
    starts = [rng.normal(size=shape).astype("float32") for shape, _ in SHAPES]
    gradients = [[rng.normal(size=s.shape).astype("float32") for s in starts] for _ in range(steps)]
    return starts, gradients


def numpy_adamw(epsilon_style, steps=5, rate=0.05, decay=0.1, b1=0.9, b2=0.999, eps=1e-6):
    """The same steps in float64 NumPy, as torch.optim.AdamW (or Keras) writes them."""
    starts, all_gradients = starts_and_gradients(steps)
    values = [s.astype("float64") for s in starts]
    m = [np.zeros_like(v) for v in values]
    v2 = [np.zeros_like(v) for v in values]
    for t, gradients in enumerate(all_gradients, start=1):
        for i, g in enumerate(gradients):
            if DECAYED[i]:
                values[i] *= 1 - decay * rate
            m[i] = b1 * m[i] + (1 - b1) * g
            v2[i] = b2 * v2[i] + (1 - b2) * g * g
            c1, c2 = 1 - b1**t, 1 - b2**t
            if epsilon_style == "torch":
                values[i] -= rate / c1 * m[i] / (np.sqrt(v2[i]) / np.sqrt(c2) + eps)
            else:
                values[i] -= rate * np.sqrt(c2) / c1 * m[i] / (np.sqrt(v2[i]) + eps)
    return values


def trained_variables(epsilon_style, parallel, monkeypatch, steps=5):
    """Three variables (two excluded from weight decay) after `steps` AdamW steps."""
    calls = []
    original = parallel_adam_update.update_all

    def counted(*args):
        calls.append(args)
        return original(*args) if parallel else False

    monkeypatch.setattr(parallel_adam_update, "update_all", counted)
    starts, all_gradients = starts_and_gradients(steps)
    variables = [keras.Variable(s, name=name) for s, (_, name) in zip(starts, SHAPES)]
    optimizer = BertAdamW(learning_rate=0.05, weight_decay=0.1, epsilon_style=epsilon_style)
    for gradients in all_gradients:
        tensors = [keras.ops.convert_to_tensor(g) for g in gradients]
        optimizer.apply_gradients(zip(tensors, variables))
    return [keras.ops.convert_to_numpy(v.value) for v in variables], len(calls)


@pytest.mark.parametrize("epsilon_style", ["keras", "torch"])
def test_all_at_once_equals_one_at_a_time(epsilon_style, monkeypatch):
    together, calls = trained_variables(epsilon_style, True, monkeypatch)
    one_by_one, _ = trained_variables(epsilon_style, False, monkeypatch)
    assert calls == 5  # one call a step, for all three variables
    for mine, own, exact, start in zip(
        together, one_by_one, numpy_adamw(epsilon_style), starts_and_gradients(0)[0]
    ):
        assert np.abs(mine - start).max() > 0.1  # it moved
        # The bias corrections in double precision, as torch.optim.AdamW computes
        # them: closer to the exact steps than Keras' float32 powers of beta.
        np.testing.assert_allclose(mine, exact, rtol=3e-7, atol=1e-7)
        np.testing.assert_allclose(own, exact, rtol=0, atol=5e-6)


def test_mixed_dtypes_fall_back_to_one_at_a_time():
    variables = [keras.Variable(np.ones(2, "float32")), keras.Variable(np.ones(2, "float16"))]
    optimizer = BertAdamW(learning_rate=0.1, weight_decay=0.0)
    optimizer.build(variables)
    gradients = [keras.ops.ones((2,), v.dtype) for v in variables]
    assert not parallel_adam_update.update_all(
        optimizer, gradients, variables, optimizer.learning_rate, "keras"
    )
    optimizer.apply_gradients(zip(gradients, variables))
    for variable in variables:
        assert np.all(keras.ops.convert_to_numpy(variable.value) < 1)


@pytest.mark.parametrize("norm_scale", [0.1, 10.0])
def test_global_norm_clipping_equals_keras(norm_scale, monkeypatch):
    from keras.optimizers import Optimizer

    calls = []
    original = parallel_adam_update.clip_by_global_norm
    monkeypatch.setattr(
        parallel_adam_update,
        "clip_by_global_norm",
        lambda *args: calls.append(args) or original(*args),
    )
    rng = np.random.default_rng(1)
    arrays = [rng.normal(size=shape).astype("float32") * norm_scale for shape, _ in SHAPES]
    gradients = [keras.ops.convert_to_tensor(a) for a in arrays]
    optimizer = BertAdamW(global_clipnorm=1.0)
    clipped = [keras.ops.convert_to_numpy(g) for g in optimizer._clip_gradients(gradients)]
    expected = [
        keras.ops.convert_to_numpy(g)
        for g in Optimizer._clip_gradients(
            optimizer, [keras.ops.convert_to_tensor(a) for a in arrays]
        )
    ]
    norm = np.sqrt(sum(float((a.astype("float64") ** 2).sum()) for a in arrays))
    for mine, keras_own, given, array in zip(clipped, expected, gradients, arrays):
        np.testing.assert_allclose(mine, keras_own, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(mine, array * min(1.0, 1.0 / norm), rtol=1e-6)
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(given), array)  # untouched
    assert len(calls) == 1  # PyTorch's one-pass norm, not Keras' squares


def test_global_norm_clipping_of_an_infinite_norm_gives_nan():
    gradients = [keras.ops.convert_to_tensor(np.array([np.inf, 1.0], "float32"))]
    clipped = BertAdamW(global_clipnorm=1.0)._clip_gradients(gradients)
    assert np.all(np.isnan(keras.ops.convert_to_numpy(clipped[0])))
