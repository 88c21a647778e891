"""TensorFlow's TPU branch of data parallelism, as far as it can be tested without a TPU,
and PyTorch's message (Keras has no distribution for it)."""

import logging
import os

import keras
import pytest

from kbert.training.distribution import TPU_VARIABLE
from kbert.training.distribution import data_parallel
from kbert.training.distribution import tpu_address

on_tensorflow = pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="TPUStrategy is TensorFlow's"
)


def test_the_tpu_is_named_by_tpu_name(monkeypatch):
    monkeypatch.setenv(TPU_VARIABLE, "grpc://10.0.0.2:8470")
    assert tpu_address() == "grpc://10.0.0.2:8470"
    monkeypatch.delenv(TPU_VARIABLE)
    # A TPU VM's chips are /dev/accel*; elsewhere there is no TPU.
    assert tpu_address() == ("local" if os.path.exists("/dev/accel0") else None)


@on_tensorflow
def test_a_tpu_that_does_not_connect_says_so(monkeypatch):
    # TPUClusterResolver's own failure on a machine without TPUs.
    monkeypatch.setenv(TPU_VARIABLE, "local")
    with pytest.raises(ValueError, match=r"Cannot connect to the TPU 'local' \(TPUClusterResolver\)"):
        with data_parallel(True):
            pass


@on_tensorflow
def test_the_resolver_error_is_kept_in_the_message(monkeypatch):
    import tensorflow as tf

    def no_tpu(tpu):
        raise ValueError(f"Please provide a TPU Name to connect to. (asked for {tpu})")

    monkeypatch.setattr(tf.distribute.cluster_resolver, "TPUClusterResolver", no_tpu)
    monkeypatch.setenv(TPU_VARIABLE, "my-tpu")
    with pytest.raises(ValueError, match="'my-tpu'.*Please provide a TPU Name.*Set TPU_NAME"):
        with data_parallel(True):
            pass


@on_tensorflow
def test_without_a_tpu_one_cpu_trains_under_the_default_strategy(monkeypatch):
    import tensorflow as tf

    monkeypatch.delenv(TPU_VARIABLE, raising=False)
    monkeypatch.setattr(tf.distribute.cluster_resolver, "TPUClusterResolver", None)
    if tpu_address() is None and not tf.config.list_logical_devices("GPU"):
        with data_parallel(True) as replicas:
            assert replicas == 1


@pytest.mark.skipif(keras.backend.backend() != "torch", reason="the PyTorch message")
def test_pytorch_says_keras_has_no_distribution_for_it(caplog):
    with caplog.at_level(logging.WARNING, logger="kbert.training"):
        with data_parallel(True) as replicas:
            assert replicas == 1
    assert "Keras has no distribution support for torch" in caplog.text
