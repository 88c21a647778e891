import keras
import numpy as np
import pytest
from keras import ops

from kbert.layers import (
    BertEmbeddings,
    BertEncoderBlock,
    BertPooler,
    BertSelfAttention,
)


def _numpy(x):
    return keras.ops.convert_to_numpy(x)


def _padding(batch=2, length=6):
    mask = np.ones((batch, length), dtype=bool)
    mask[1, 4:] = False
    return mask


def test_attention_fused_and_explicit_paths_agree():
    layer = BertSelfAttention(hidden_size=16, num_heads=4)
    x = np.random.default_rng(0).normal(size=(2, 6, 16)).astype("float32")
    mask = _padding()
    fused = _numpy(layer(x, mask))
    explicit, weights = layer(x, mask, return_attention_weights=True)
    np.testing.assert_allclose(fused, _numpy(explicit), atol=1e-5)
    weights = _numpy(weights)
    assert weights.shape == (2, 4, 6, 6)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    assert np.all(weights[1, :, :, 4:] == 0.0)


def test_attention_ignores_padded_keys():
    layer = BertSelfAttention(hidden_size=16, num_heads=2)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 6, 16)).astype("float32")
    mask = _padding()
    changed = x.copy()
    changed[1, 4:] = rng.normal(size=(2, 16)) * 100
    np.testing.assert_allclose(
        _numpy(layer(x, mask))[1, :4], _numpy(layer(changed, mask))[1, :4], atol=1e-5
    )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_attention_mask_is_dtype_safe(dtype):
    layer = BertSelfAttention(hidden_size=16, num_heads=2, dtype=dtype)
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 6, 16)).astype("float32")
    x[1, 4:] = 3e4 / 16  # large values at padded positions must not leak through the mask
    mask = _padding()
    out, weights = layer(x, mask, return_attention_weights=True)
    out, weights = _numpy(ops.cast(out, "float32")), _numpy(ops.cast(weights, "float32"))
    assert np.isfinite(out).all()
    assert np.all(weights[1, :, :, 4:] == 0.0)
    fused = _numpy(ops.cast(layer(x, mask), "float32"))
    assert np.isfinite(fused).all()
    tolerance = 5e-2 if dtype == "bfloat16" else 5e-3
    np.testing.assert_allclose(fused[:, :4], out[:, :4], atol=tolerance * np.abs(out).max())


def test_attention_rejects_indivisible_heads():
    with pytest.raises(ValueError, match="hidden_size=10, num_heads=4"):
        BertSelfAttention(hidden_size=10, num_heads=4)


def test_embeddings_shape_and_length_limit():
    layer = BertEmbeddings(
        vocabulary_size=11, hidden_size=8, max_positions=5, type_vocabulary_size=2
    )
    ids = np.array([[1, 2, 3, 4]], dtype="int32")
    assert _numpy(layer(ids, np.zeros_like(ids))).shape == (1, 4, 8)
    too_long = np.ones((1, 6), dtype="int32")
    with pytest.raises(ValueError, match="at most 5 tokens.*sequence_length=6"):
        layer(too_long, np.zeros_like(too_long))


def test_embeddings_sum_position_and_segment():
    layer = BertEmbeddings(
        vocabulary_size=11, hidden_size=8, max_positions=5, type_vocabulary_size=2
    )
    ids = np.array([[3, 3]], dtype="int32")
    segments = np.array([[0, 1]], dtype="int32")
    layer(ids, segments)
    tokens = _numpy(layer.token_embedding.embeddings)
    positions = _numpy(layer.position_embeddings)
    segment_table = _numpy(layer.segment_embedding.embeddings)
    raw = tokens[[3, 3]] + positions[:2] + segment_table[[0, 1]]
    mean = raw.mean(-1, keepdims=True)
    expected = (raw - mean) / np.sqrt(raw.var(-1, keepdims=True) + 1e-12)
    np.testing.assert_allclose(_numpy(layer(ids, segments))[0], expected, atol=1e-5)


def test_encoder_block_uses_exact_gelu():
    block = BertEncoderBlock(hidden_size=8, num_heads=2, intermediate_size=16, hidden_dropout=0.0)
    x = np.random.default_rng(3).normal(size=(1, 3, 8)).astype("float32")
    mask = np.ones((1, 3), dtype=bool)
    out = _numpy(block(x, mask))
    # Recompute the block by hand in NumPy with the erf GELU.
    from math import erf

    attended = _numpy(block.self_attention(x, mask))
    h = x + attended
    h = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-12)
    h = h * _numpy(block.attention_layer_norm.gamma) + _numpy(block.attention_layer_norm.beta)
    inner = h @ _numpy(block.intermediate_dense.kernel) + _numpy(block.intermediate_dense.bias)
    inner = 0.5 * inner * (1 + np.vectorize(erf)(inner / np.sqrt(2)))
    y = h + inner @ _numpy(block.output_dense.kernel) + _numpy(block.output_dense.bias)
    y = (y - y.mean(-1, keepdims=True)) / np.sqrt(y.var(-1, keepdims=True) + 1e-12)
    np.testing.assert_allclose(out, y, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "mixed_bfloat16", "bfloat16"])
@pytest.mark.parametrize("packed", [False, True])
def test_encoder_block_states_its_symbolic_output_as_tracing_finds_it(dtype, packed):
    """The block's own `compute_output_spec` (no trace: a faster model build) gives the
    shape and dtype that tracing the block gives, and a functional graph builds on it."""
    block = BertEncoderBlock(hidden_size=8, num_heads=2, intermediate_size=16, dtype=dtype)
    x = keras.KerasTensor((None, None, 8), dtype=block.compute_dtype)
    padding = keras.KerasTensor((None, None), dtype="bool")
    extra = {"attention_mask": keras.KerasTensor((None, 1, None, None), "bool")} if packed else {}
    block.build(x.shape)
    stated = block.compute_output_spec(x, padding, **extra)
    traced = keras.layers.Layer.compute_output_spec(block, x, padding, **extra)
    assert (stated.shape, stated.dtype) == (traced.shape, traced.dtype)
    stated, weights = block.compute_output_spec(x, padding, return_attention_weights=True)
    assert (stated.shape, weights.shape) == (traced.shape, (None, 2, None, None))

    inputs = keras.Input((None, 8)), keras.Input((None,), dtype="bool")
    model = keras.Model(inputs, block(*inputs))
    x = np.random.default_rng(5).normal(size=(2, 6, 8)).astype("float32")
    assert model.output.shape == (None, None, 8)
    np.testing.assert_allclose(
        _numpy(model([x, _padding()])).astype("float32"),
        _numpy(block(x, _padding())).astype("float32"),
        atol=1e-6,
    )


def test_pooler_is_dense_tanh_on_first_token():
    pooler = BertPooler(hidden_size=4)
    x = np.random.default_rng(4).normal(size=(2, 3, 4)).astype("float32")
    out = _numpy(pooler(x))
    expected = np.tanh(x[:, 0] @ _numpy(pooler.dense.kernel) + _numpy(pooler.dense.bias))
    np.testing.assert_allclose(out, expected, atol=1e-6)
