"""The attention dispatch reaches each backend's fused kernel, and dropout where it trains.

The cuDNN tests need no GPU: they lower the compiled function for CUDA on this CPU
(`jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`) with only cuDNN's
version and compute-capability checks answering as an H200 would, and read the custom
calls in the lowered program. Everything else about the program is what a GPU gets.
"""

import contextlib
import re
from unittest import mock

import keras
import numpy as np
import pytest
from model_helpers import TINY, make_inputs

from kbert.layers import BertSelfAttention
from kbert.models import BertBackbone

only_jax = pytest.mark.skipif(
    keras.config.backend() != "jax", reason="cuDNN fused attention is the JAX backend's path"
)

# An H200: compute capability 9.0, with a cuDNN 9.10 install.
H200_COMPUTE_CAPABILITY = (9, 0)
CUDNN_VERSION = 91000
# Head size 8 (hidden 32 over 4 heads) and an even length are within cuDNN's limits.
SEQUENCE_LENGTH = 16


@contextlib.contextmanager
def cudnn_answers_as_an_h200():
    """Patches only cuDNN's availability checks; the lowering itself is JAX's own."""
    from jax._src.cudnn import fused_attention_stablehlo as cudnn

    def at_least(capability):
        return H200_COMPUTE_CAPABILITY >= tuple(int(part) for part in capability.split("."))

    def equal(capability):
        return H200_COMPUTE_CAPABILITY == tuple(int(part) for part in capability.split("."))

    with (
        mock.patch.object(cudnn, "check_cudnn_version", return_value=CUDNN_VERSION),
        mock.patch.object(cudnn, "check_compute_capability", side_effect=at_least),
        mock.patch.object(cudnn, "is_cuda_compute_capability_equal", side_effect=equal),
    ):
        yield


def cuda_custom_calls(function, *arguments):
    """The custom-call targets of `function` lowered for CUDA, with their counts."""
    import jax

    with cudnn_answers_as_an_h200():
        text = jax.jit(function).trace(*arguments).lower(lowering_platforms=("cuda",)).as_text()
    counts = {}
    for target in re.findall(r"custom_call @([\w$]+)", text):
        counts[target] = counts.get(target, 0) + 1
    return counts


def _fused_attention_calls(counts):
    forward = sum(n for name, n in counts.items() if name.startswith("__cudnn$fmha")
                  and not name.endswith("Backward"))
    backward = sum(n for name, n in counts.items() if name.startswith("__cudnn$fmha")
                   and name.endswith("Backward"))
    return forward, backward


def _bf16_backbone(**overrides):
    config = dict(TINY, max_positions=SEQUENCE_LENGTH, **overrides)
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        return BertBackbone(**config)
    finally:
        keras.mixed_precision.set_global_policy("float32")


@only_jax
def test_bf16_backbone_forward_lowers_to_cudnn_fused_attention():
    backbone = _bf16_backbone()
    inputs = make_inputs(batch_size=4, sequence_length=SEQUENCE_LENGTH)

    def forward(trainable, non_trainable, inputs):
        outputs, _ = backbone.stateless_call(trainable, non_trainable, inputs)
        return outputs["sequence_output"]

    counts = cuda_custom_calls(
        forward,
        [v.value for v in backbone.trainable_variables],
        [v.value for v in backbone.non_trainable_variables],
        inputs,
    )
    assert counts.get("__cudnn$fmhaSoftmax") == TINY["num_layers"], counts
    assert _fused_attention_calls(counts) == (TINY["num_layers"], 0)


@only_jax
def test_bf16_backbone_gradient_lowers_to_cudnn_forward_and_backward_with_dropout():
    import jax

    backbone = _bf16_backbone(attention_dropout=0.1, hidden_dropout=0.1)
    inputs = make_inputs(batch_size=4, sequence_length=SEQUENCE_LENGTH)

    def loss(trainable, non_trainable, inputs):
        outputs, _ = backbone.stateless_call(trainable, non_trainable, inputs, training=True)
        return jax.numpy.mean(outputs["sequence_output"].astype("float32") ** 2)

    counts = cuda_custom_calls(
        jax.grad(loss),
        [v.value for v in backbone.trainable_variables],
        [v.value for v in backbone.non_trainable_variables],
        inputs,
    )
    # Attention-probability dropout runs inside the kernel, forward and backward.
    assert counts.get("__cudnn$fmhaSoftmaxDropout") == TINY["num_layers"], counts
    assert counts.get("__cudnn$fmhaSoftmaxDropoutBackward") == TINY["num_layers"], counts


@only_jax
def test_pretraining_train_step_lowers_to_cudnn_forward_and_backward():
    from kbert.models import BertPretrainer
    from kbert.pretraining.pretraining_objective import PretrainingObjective

    pretrainer = BertPretrainer(_bf16_backbone(attention_dropout=0.1))
    model = PretrainingObjective(pretrainer)
    model.compile_objective(keras.optimizers.AdamW(1e-4))
    batch = make_inputs(batch_size=4, sequence_length=SEQUENCE_LENGTH, num_masks=3)
    batch.update(
        mask_ids=np.ones((4, 3), "int32"),
        mask_weights=np.ones((4, 3), "float32"),
        nsp_labels=np.zeros((4,), "int32"),
    )
    # One step on this CPU builds the optimiser and metric variables (XLA path).
    model.train_on_batch(batch)
    state = (
        [v.value for v in model.trainable_variables],
        [v.value for v in model.non_trainable_variables],
        [v.value for v in model.optimizer.variables],
        [v.value for v in model.metrics_variables],
    )
    counts = cuda_custom_calls(model.train_step, state, (batch,))
    forward, backward = _fused_attention_calls(counts)
    assert forward >= TINY["num_layers"] and backward >= TINY["num_layers"], counts
    assert counts.get("__cudnn$fmhaSoftmaxDropoutBackward") == TINY["num_layers"], counts


@only_jax
def test_float32_stays_on_xla_and_says_why(caplog):
    from kbert.layers import attention_dispatch

    attention_dispatch._logged_reasons.clear()
    inputs = make_inputs(batch_size=2, sequence_length=SEQUENCE_LENGTH)

    def forward(trainable, non_trainable, inputs):
        return backbone.stateless_call(trainable, non_trainable, inputs)[0]["sequence_output"]

    with caplog.at_level("DEBUG", logger="kbert.layers"):
        backbone = BertBackbone(**dict(TINY, max_positions=SEQUENCE_LENGTH))
        counts = cuda_custom_calls(
            forward,
            [v.value for v in backbone.trainable_variables],
            [v.value for v in backbone.non_trainable_variables],
            inputs,
        )
    assert _fused_attention_calls(counts) == (0, 0)
    records = [record for record in caplog.records if "cuDNN" in record.getMessage()]
    reasons = [record.getMessage() for record in records]
    assert len(reasons) == 1 and "float32" in reasons[0], reasons  # logged once, two layers
    import jax

    # No GPU, no news: the reason is for debugging there, a warning only on a GPU.
    expected = "DEBUG" if jax.default_backend() == "cpu" else "WARNING"
    assert records[0].levelname == expected, records[0].levelname


@only_jax
def test_without_cudnn_the_backbone_lowers_to_xla():
    backbone = _bf16_backbone()
    inputs = make_inputs(batch_size=2, sequence_length=SEQUENCE_LENGTH)
    import jax

    def forward(trainable, non_trainable, inputs):
        return backbone.stateless_call(trainable, non_trainable, inputs)[0]["sequence_output"]

    # No patching: this CPU has no cuDNN, so the program is the XLA one.
    text = jax.jit(forward).trace(
        [v.value for v in backbone.trainable_variables],
        [v.value for v in backbone.non_trainable_variables],
        inputs,
    ).lower(lowering_platforms=("cuda",)).as_text()
    assert "__cudnn$fmha" not in text


# --- Every backend -------------------------------------------------------------------------


def _attention_inputs(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, 12, 16)).astype("float32")
    mask = np.ones((2, 12), dtype=bool)
    mask[1, 7:] = False
    return x, mask


def test_attention_dropout_applies_in_training_only():
    layer = BertSelfAttention(hidden_size=16, num_heads=2, attention_dropout=0.5)
    x, mask = _attention_inputs()
    inference = keras.ops.convert_to_numpy(layer(x, mask, training=False))
    explicit, _ = layer(x, mask, return_attention_weights=True)
    np.testing.assert_allclose(inference, keras.ops.convert_to_numpy(explicit), atol=1e-5)
    first = keras.ops.convert_to_numpy(layer(x, mask, training=True))
    second = keras.ops.convert_to_numpy(layer(x, mask, training=True))
    assert np.abs(first - inference).max() > 1e-3  # probabilities were dropped
    assert np.abs(first - second).max() > 1e-3  # with new masks each call
    assert np.isfinite(first).all()


def test_attention_dropout_keeps_the_expected_share_of_probabilities():
    # With all-equal values the context is the sum of the kept, rescaled probabilities,
    # so its mean over many rows estimates the keep rate times 1 / keep rate = 1.
    rate = 0.3
    layer = BertSelfAttention(hidden_size=16, num_heads=2, attention_dropout=rate)
    layer.build((4, 64, 16))
    x = np.random.default_rng(3).normal(size=(4, 64, 16)).astype("float32")
    mask = np.ones((4, 64), dtype=bool)
    qkv = keras.ops.reshape(layer.query_key_value(x), (4, 64, 3, 2, 8))
    ones = keras.ops.ones_like(qkv[:, :, 2])
    from kbert.layers.attention_dispatch import dot_product_attention

    context = keras.ops.convert_to_numpy(
        dot_product_attention(
            qkv[:, :, 0], qkv[:, :, 1], ones, keras.ops.convert_to_tensor(mask),
            dropout_rate=rate, probability_dropout=layer.probability_dropout,
            kernel_seed=layer.kernel_seed, training=True,
        )
    )
    # 4 x 64 x 2 rows of 64 keys: the mean is 1 within a few standard errors.
    assert context.mean() == pytest.approx(1.0, abs=0.03)
    assert context.std() > 0.05  # and the rows do differ: dropout happened


@pytest.mark.skipif(keras.config.backend() != "torch", reason="PyTorch's SDPA backends")
def test_torch_inference_attention_is_a_fused_kernel_not_the_math_path():
    from torch.nn.attention import SDPBackend, sdpa_kernel

    layer = BertSelfAttention(hidden_size=16, num_heads=2)
    x, mask = _attention_inputs()
    expected = keras.ops.convert_to_numpy(layer(x, mask))
    fused = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
             SDPBackend.CUDNN_ATTENTION]
    with sdpa_kernel(fused):  # raises "No available kernel" if only math would do
        np.testing.assert_allclose(keras.ops.convert_to_numpy(layer(x, mask)), expected,
                                   atol=1e-6)
