"""The forms kbert's layers take while Keras writes them as an ONNX graph.

ONNX Runtime's graph optimizer fuses BERT's building blocks when they come in the forms
its fusions recognise (LayerNormalization, Gelu then BiasGelu, SkipLayerNormalization,
MatMul on the whole (B, L, H) activations); tf2onnx, through which Keras exports on
TensorFlow, writes the forms TensorFlow computes, which it fuses none of: the layer norm
as moments and an rsqrt, the exact GELU as `erfc`, every 3-D Dense as a `Tensordot`
(reshape to 2-D, matmul, a shape computed at run time, reshape back) and attention as
two einsums with their own reshapes. A BERT-base graph had 461 nodes in these forms
instead of 1,753 when they were introduced; tests/test_onnx_export.py checks that the
optimized graph keeps under 70 nodes a layer and no Tensordot.

Inside `onnx_export_forms()` the layers compute the same functions in the fusable forms:

- `keras.layers.LayerNormalization` (over the last axis):
  `(x - mean) / sqrt(var + epsilon) * gamma + beta`, var the mean of `(x - mean) ** 2`;
- `keras.layers.Dense` on inputs of rank 3 or more: one broadcasting matmul with the
  kernel, then the bias and the activation;
- the exact GELU: `(x * 0.5) * (1 + erf(x / sqrt(2)))` (`kbert.layers.activations`);
- attention: two batched matmuls over (B, N, T, D) and a masked softmax
  (`kbert.layers.attention_dispatch`).

For the duration of the block the two Keras classes' `call` goes through a wrapper that
takes these forms in the thread that opened the block only: every other thread runs
Keras' own `call` unchanged, and the classes get their own `call` back when the block
closes. One export at a time holds the block. Nothing is trained in these forms: they
are written for inference (no dropout, no masks other than padding or packing).
"""

import contextlib
import threading

import keras
from keras import ops

_state = threading.local()
_patch_lock = threading.Lock()


def exporting_onnx():
    """Whether the calling code runs inside `onnx_export_forms()`."""
    return getattr(_state, "depth", 0) > 0


@contextlib.contextmanager
def onnx_export_forms():
    """Layers compute in the forms ONNX Runtime fuses (see the module notes) inside the block."""
    with _patch_lock:
        dense_call = keras.layers.Dense.call
        layer_norm_call = keras.layers.LayerNormalization.call
        keras.layers.Dense.call = _dense_form(dense_call)
        keras.layers.LayerNormalization.call = _layer_norm_form(layer_norm_call)
        _state.depth = getattr(_state, "depth", 0) + 1
        try:
            yield
        finally:
            _state.depth -= 1
            keras.layers.Dense.call = dense_call
            keras.layers.LayerNormalization.call = layer_norm_call


def _dense_form(original):
    def call(self, inputs, training=None):
        if (
            not exporting_onnx()
            or len(inputs.shape) < 3
            or getattr(self, "quantization_mode", None)
        ):
            return original(self, inputs, training=training)
        outputs = _broadcast_matmul(inputs, self.kernel)
        if self.bias is not None:
            outputs = outputs + self.bias
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs

    return call


def _broadcast_matmul(inputs, kernel):
    """(..., K) @ (K, N) as one matmul broadcast over the leading axes.

    Keras' TensorFlow backend writes it as a Tensordot; TensorFlow's own matmul
    broadcasts a rank-2 kernel, which tf2onnx writes as one MatMul whose output shape
    ONNX Runtime still knows (its bias and residual fusions need it).
    """
    if keras.config.backend() == "tensorflow":
        import tensorflow as tf

        return tf.linalg.matmul(inputs, kernel)
    return ops.matmul(inputs, kernel)


def _layer_norm_form(original):
    def call(self, inputs):
        axis = self.axis if isinstance(self.axis, (list, tuple)) else [self.axis]
        last = [len(inputs.shape) - 1]
        if (
            not exporting_onnx()
            or getattr(self, "rms_scaling", False)
            or [a % len(inputs.shape) for a in axis] != last
        ):
            return original(self, inputs)
        x = ops.cast(inputs, "float32")
        mean = ops.mean(x, axis=-1, keepdims=True)
        centred = x - mean
        variance = ops.mean(ops.power(centred, 2.0), axis=-1, keepdims=True)
        outputs = centred / ops.sqrt(variance + self.epsilon)
        if self.gamma is not None:
            outputs = outputs * self.gamma
        if self.beta is not None:
            outputs = outputs + self.beta
        return ops.cast(outputs, self.compute_dtype)

    return call


def gelu_form(x):
    """The exact GELU as ONNX Runtime's Gelu fusion reads it."""
    return (x * 0.5) * (1.0 + ops.erf(x / 1.4142135623730951))


def attention_form(query, key, value, mask):
    """Softmax attention in batched matmuls: query (B, T, N, D), key and value (B, S, N, D),
    a bool mask broadcastable to (B, N, T, S); the (B, T, N, D) context."""
    scale = 1.0 / float(query.shape[-1]) ** 0.5
    scores = ops.matmul(ops.transpose(query, (0, 2, 1, 3)), ops.transpose(key, (0, 2, 3, 1)))
    scores = ops.where(mask, scores * scale, ops.cast(-3.4028234663852886e38, scores.dtype))
    weights = ops.softmax(scores, axis=-1)  # (B, N, T, S)
    context = ops.matmul(weights, ops.transpose(value, (0, 2, 1, 3)))  # (B, N, T, D)
    return ops.transpose(context, (0, 2, 1, 3))
