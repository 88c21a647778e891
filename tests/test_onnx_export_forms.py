"""The ONNX export forms apply in the exporting thread only; every other thread runs Keras."""

import threading

import keras
import numpy as np

from kbert.layers import onnx_export_forms


def _count_export_matmuls(monkeypatch):
    calls = []
    original = onnx_export_forms._broadcast_matmul

    def counted(inputs, kernel):
        calls.append(threading.get_ident())
        return original(inputs, kernel)

    monkeypatch.setattr(onnx_export_forms, "_broadcast_matmul", counted)
    return calls


def _dense_and_norm():
    dense = keras.layers.Dense(4)
    norm = keras.layers.LayerNormalization(epsilon=1e-6)
    inputs = np.random.default_rng(0).normal(size=(2, 3, 5)).astype("float32")
    return dense, norm, inputs


def test_the_forms_compute_what_keras_computes_in_the_exporting_thread(monkeypatch):
    calls = _count_export_matmuls(monkeypatch)
    dense, norm, inputs = _dense_and_norm()
    expected = keras.ops.convert_to_numpy(norm(dense(inputs)))
    with onnx_export_forms.onnx_export_forms():
        exported = keras.ops.convert_to_numpy(norm(dense(inputs)))
    assert calls == [threading.get_ident()]
    np.testing.assert_allclose(exported, expected, rtol=1e-5, atol=1e-6)


def test_another_thread_runs_keras_own_call_while_an_export_is_open(monkeypatch):
    calls = _count_export_matmuls(monkeypatch)
    dense, norm, inputs = _dense_and_norm()
    expected = keras.ops.convert_to_numpy(norm(dense(inputs)))
    outputs = {}

    def other_thread():
        outputs["other"] = keras.ops.convert_to_numpy(norm(dense(inputs)))

    with onnx_export_forms.onnx_export_forms():
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
    assert calls == []  # the other thread never took the export's form
    np.testing.assert_array_equal(outputs["other"], expected)


def test_the_classes_get_their_own_call_back():
    dense_call = keras.layers.Dense.call
    norm_call = keras.layers.LayerNormalization.call
    with onnx_export_forms.onnx_export_forms():
        assert keras.layers.Dense.call is not dense_call
    assert keras.layers.Dense.call is dense_call
    assert keras.layers.LayerNormalization.call is norm_call
