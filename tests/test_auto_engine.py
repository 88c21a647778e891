"""engine="auto" takes ONNX Runtime from the first call: a small model's graph is made
before the call answers, a large one's in the background once the model is left alone,
Keras answering meanwhile.

The models are tiny; "large" is what `SYNCHRONOUS_EXPORT_BYTES` says, set to 0 here, and
the background export waits `EXPORT_DELAY_SECONDS`, 0 here unless a test says.
The export is kbert's own (`kbert.inference.onnx_export`, in this process).
"""

import importlib.util
import logging

import keras
import pytest

from kbert.inference import inference_engine
from kbert.inference.inference_engine import engine_model
from kbert.inference.onnx_runtime_model import OnnxRuntimeModel
from onnx_cache_helpers import make_classifier_preset

pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("onnxruntime") is None or not inference_engine.can_export(),
        reason="the ONNX Runtime engine is the optional kbert[onnx] extra"),
    pytest.mark.skipif(keras.config.backend() == "tensorflow",
                       reason="on TensorFlow 'auto' runs Keras (tested in test_inference_engines)"),
]

TEXTS = ["the cat sat", "a good dog ran to the river"]
TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def classifier(tmp_path_factory):
    from kbert.models import BertClassifier

    return BertClassifier.from_preset(make_classifier_preset(tmp_path_factory.mktemp("auto")))


@pytest.fixture
def on_a_cpu(tmp_path, monkeypatch, classifier):
    """A CPU, "auto" preferring ONNX Runtime, an empty cache; nothing made in this process."""
    monkeypatch.setenv("KBERT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(inference_engine, "AUTO_PREFERS_ONNX_RUNTIME", True)
    monkeypatch.setattr(inference_engine, "on_cpu", lambda: True)
    monkeypatch.setattr(inference_engine, "_EXPORTS", {})
    monkeypatch.setattr(inference_engine, "EXPORT_DELAY_SECONDS", 0.0)
    inference_engine._ENGINES.pop(classifier, None)
    yield tmp_path / "cache"
    for export in inference_engine._EXPORTS.values():
        export["thread"].join(timeout=120)
    inference_engine._ENGINES.pop(classifier, None)


def _background_exports(classifier):
    checksum = inference_engine._entry(classifier)["checksum"]
    return {key: export for key, export in inference_engine._EXPORTS.items()
            if key[0] == checksum}


def _assert_same(results, expected):
    for result, keras_result in zip(results, expected, strict=True):
        assert result.label == keras_result.label
        for label, probability in keras_result.probabilities.items():
            assert abs(result.probabilities[label] - probability) < TOLERANCE


def test_a_large_model_answers_with_keras_while_its_graph_is_made(classifier, on_a_cpu,
                                                                   monkeypatch):
    monkeypatch.setattr(inference_engine, "SYNCHRONOUS_EXPORT_BYTES", 0)
    expected = classifier.classify(TEXTS, engine="keras")
    assert engine_model(classifier) is classifier  # Keras answers the first call
    (export,) = _background_exports(classifier).values()
    assert engine_model(classifier) is classifier or export["written"].is_set()
    export["thread"].join(timeout=120)
    runner = engine_model(classifier)
    assert isinstance(runner, OnnxRuntimeModel)
    _assert_same(classifier.classify(TEXTS), expected)
    assert inference_engine.graph_path(classifier).is_file()
    # Another process (here: this one, forgetting what it made) loads the cached graph
    # the same way, Keras answering meanwhile, and does not export it again.
    inference_engine._ENGINES.pop(classifier, None)
    inference_engine._EXPORTS.clear()
    written = inference_engine.graph_path(classifier).stat().st_mtime_ns
    assert engine_model(classifier) is classifier
    (export,) = _background_exports(classifier).values()
    export["thread"].join(timeout=120)
    assert isinstance(engine_model(classifier), OnnxRuntimeModel)
    assert inference_engine.graph_path(classifier).stat().st_mtime_ns == written


def test_a_small_model_gets_its_graph_before_the_first_answer(classifier, on_a_cpu):
    expected = classifier.classify(TEXTS, engine="keras")
    assert isinstance(engine_model(classifier), OnnxRuntimeModel)
    assert _background_exports(classifier) == {}
    _assert_same(classifier.classify(TEXTS), expected)


def test_a_corrupted_graph_is_refused_with_a_warning_and_made_again(classifier, on_a_cpu,
                                                                     caplog):
    engine_model(classifier)
    graph = inference_engine.graph_path(classifier)
    data = bytearray(graph.read_bytes())
    data[len(data) // 2] ^= 0xFF
    graph.write_bytes(bytes(data))
    inference_engine._ENGINES.pop(classifier, None)
    with caplog.at_level(logging.WARNING, logger="kbert.inference"):
        runner = engine_model(classifier)
    assert isinstance(runner, OnnxRuntimeModel)
    assert f"The cached ONNX graph {str(graph)!r} is not the one kbert wrote" in caplog.text
    assert "it is made again" in caplog.text
    assert graph.read_bytes() != bytes(data)


def test_a_failed_export_leaves_keras_for_the_process(classifier, on_a_cpu, monkeypatch,
                                                      caplog):
    from kbert.inference import onnx_export

    def fails(model, path, tokenizer=None):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(inference_engine, "SYNCHRONOUS_EXPORT_BYTES", 0)
    monkeypatch.setattr(onnx_export, "export_graph", fails)
    assert engine_model(classifier) is classifier
    (export,) = _background_exports(classifier).values()
    export["thread"].join(timeout=120)
    assert engine_model(classifier) is classifier  # not tried again on every call
    assert "inference runs on Keras" in caplog.text


def test_no_export_without_onnxruntime_and_nothing_above_debug(classifier, on_a_cpu,
                                                               monkeypatch, caplog):
    real_installed = inference_engine.installed
    monkeypatch.setattr(inference_engine, "installed",
                        lambda name: name != "onnxruntime" and real_installed(name))
    monkeypatch.setattr(inference_engine, "_told_missing", False)
    with caplog.at_level(logging.DEBUG):
        assert engine_model(classifier) is classifier
        classifier.classify(TEXTS)
    assert not on_a_cpu.exists() and inference_engine._EXPORTS == {}
    assert [record for record in caplog.records if record.levelno > logging.DEBUG] == []


def test_a_background_export_waits_until_the_model_is_left_alone(classifier, on_a_cpu,
                                                                  monkeypatch):
    monkeypatch.setattr(inference_engine, "SYNCHRONOUS_EXPORT_BYTES", 0)
    monkeypatch.setattr(inference_engine, "EXPORT_DELAY_SECONDS", 0.5)
    for _ in range(4):  # each call puts it off again
        assert engine_model(classifier) is classifier
        (export,) = _background_exports(classifier).values()
        assert not export["started"].is_set()
        export["thread"].join(timeout=0.3)
    export["thread"].join(timeout=120)
    assert export["started"].is_set() and export["written"].is_set()
    assert isinstance(engine_model(classifier), OnnxRuntimeModel)
