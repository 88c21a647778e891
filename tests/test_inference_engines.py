"""`engine="onnxruntime"` gives the Keras results; int8 is opt-in; "auto" falls back in one line.

The ONNX graphs are made into a temporary kbert cache, in this process (written from the
weights, a fraction of a second each).
"""

import inspect
import logging

import numpy as np
import pytest

from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset
from kbert import inference
from kbert.inference import inference_engine
from kbert.inference.inference_engine import engine_model
from kbert.models import BertClassifier
from kbert.models import BertMaskedLM
from kbert.models import BertQuestionAnswerer
from kbert.models import BertTokenClassifier
from process_helpers import on_the_process_pass

pytestmark = on_the_process_pass(
    "ONNX Runtime runs the same graph whatever the backend that exported it (the export "
    "itself is tested on every backend in test_onnx_export)"
)

TOLERANCE = 1e-4
CALLS = (inference.classify, inference.tag, inference.fill_mask, inference.answer,
         inference.choose)

needs_onnx = pytest.mark.skipif(
    not inference_engine.can_export()
    or __import__("importlib").util.find_spec("onnxruntime") is None,
    reason="the ONNX Runtime engine is the optional kbert[onnx] extra",
)


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KBERT_CACHE", str(tmp_path_factory.mktemp("kbert-cache")))
        yield


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    return make_tiny_preset(tmp_path_factory.mktemp("engines") / "preset")


@pytest.fixture(scope="module")
def classifier(preset):
    """A classifier fine-tuned for two epochs on the positive-word rule."""
    model = BertClassifier.from_preset(preset, num_classes=2, label_names=["neg", "pos"])
    examples = classification_examples(96, seed=0)
    model.fit([example.text for example in examples],
              np.array([example.label == "pos" for example in examples], dtype="int32"),
              epochs=2, batch_size=16, verbose=0)
    return model


def test_every_call_defaults_to_auto_without_quantization():
    for call in CALLS:
        parameters = inspect.signature(call).parameters
        assert parameters["engine"].default == "auto", call.__name__
        assert parameters["quantize"].default is None, call.__name__


def test_auto_runs_keras_off_a_cpu_and_makes_no_graph(classifier, tmp_path, monkeypatch):
    # Where ONNX Runtime was not measured faster (here: a GPU), "auto" exports nothing;
    # on a CPU it makes the graph (test_auto_engine).
    monkeypatch.setenv("KBERT_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(inference_engine, "on_cpu", lambda: False)
    assert engine_model(classifier) is classifier
    assert engine_model(classifier, engine="keras") is classifier
    assert not (tmp_path / "empty-cache").exists()


def test_bad_engine_and_quantization_are_refused(classifier):
    with pytest.raises(ValueError, match="`engine` must be one of"):
        classifier.classify("the cat", engine="tensorrt")
    with pytest.raises(ValueError, match="`quantize` must be None or 'int8'"):
        classifier.classify("the cat", quantize="int4")


def test_missing_onnxruntime_falls_back_to_keras_with_one_debug_line(classifier, monkeypatch,
                                                                       caplog):
    real_installed = inference_engine.installed
    monkeypatch.setattr(inference_engine, "AUTO_PREFERS_ONNX_RUNTIME", True)
    monkeypatch.setattr(inference_engine, "on_cpu", lambda: True)
    monkeypatch.setattr(inference_engine, "_told_missing", False)
    monkeypatch.setattr(inference_engine, "installed",
                        lambda name: name != "onnxruntime" and real_installed(name))
    expected = classifier.classify(["the cat sat", "a good dog"], engine="keras")
    with caplog.at_level(logging.DEBUG, logger="kbert.inference"):
        first = classifier.classify(["the cat sat", "a good dog"])
        classifier.classify("the cat sat")
    lines = [record for record in caplog.records if "onnxruntime is not installed" in record.message]
    # The light install lacks it by design: a DEBUG line, never shown at kbert's INFO.
    assert [record.levelno for record in lines] == [logging.DEBUG]
    assert first == expected


@needs_onnx
@pytest.mark.slow
def test_onnx_runtime_gives_the_keras_classifications(classifier, onnx_cache, monkeypatch):
    monkeypatch.setattr(inference_engine, "AUTO_PREFERS_ONNX_RUNTIME", True)
    texts = [example.text for example in classification_examples(24, seed=5)]
    expected = classifier.classify(texts, engine="keras")
    got = classifier.classify(texts, engine="onnxruntime")
    for keras_result, onnx_result in zip(expected, got):
        assert onnx_result.label == keras_result.label
        for label, probability in keras_result.probabilities.items():
            assert abs(onnx_result.probabilities[label] - probability) < TOLERANCE
    # The graph is cached beside the weights' checksum; a second call reuses the session.
    assert inference_engine.graph_path(classifier).is_file()
    runner = engine_model(classifier, "onnxruntime")
    assert engine_model(classifier, "onnxruntime") is runner
    # From now on "auto" runs it on a CPU (where it was measured faster), and Keras elsewhere.
    assert engine_model(classifier) is runner
    assert classifier.classify(texts) == got
    monkeypatch.setattr(inference_engine, "on_cpu", lambda: False)
    assert engine_model(classifier) is classifier
    # Where only a checksum of every weight tells that the graph is still the model's
    # (TensorFlow's in-place variables), "auto" does not pay it on every call.
    monkeypatch.setattr(inference_engine, "on_cpu", lambda: True)
    monkeypatch.setattr(inference_engine, "_weights_stamp", lambda variables: None)
    assert engine_model(classifier) is classifier


@needs_onnx
@pytest.mark.slow
def test_onnx_runtime_pads_each_batch_to_its_own_longest_row(classifier, onnx_cache,
                                                              monkeypatch):
    # No compilation per shape, so no length bucket: every token ONNX Runtime computes
    # is one of the texts' (the Keras engine pads 9 tokens to 16).
    runner = engine_model(classifier, "onnxruntime")
    shapes = []
    run = runner.predict_on_batch
    monkeypatch.setattr(runner, "predict_on_batch",
                        lambda inputs: shapes.append(inputs["token_ids"].shape) or run(inputs))
    words = " ".join(example.text for example in classification_examples(4, seed=3)).split()
    texts = [" ".join(words[:count]) for count in (5, 9, 2, 13)]
    lengths = [len(classifier.tokenizer.encode(text).token_ids) for text in texts]
    assert len(set(lengths)) == 4
    results = classifier.classify(texts, batch_size=2, engine="onnxruntime")
    expected = classifier.classify(texts, batch_size=2, engine="keras")  # the caller's order
    for result, keras_result in zip(results, expected):
        assert abs(result.probability - keras_result.probability) < TOLERANCE
    longest_first = sorted(lengths, reverse=True)
    assert shapes == [(2, longest_first[0]), (2, longest_first[2])]


@needs_onnx
@pytest.mark.slow
def test_int8_changes_scores_a_little_and_keeps_the_accuracy(classifier, onnx_cache, caplog):
    examples = classification_examples(64, seed=7)
    texts = [example.text for example in examples]
    gold = [example.label for example in examples]

    def accuracy(results):
        return np.mean([result.label == label for result, label in zip(results, gold)])

    float_results = classifier.classify(texts, engine="keras")
    for engine in ("onnxruntime", "keras"):
        int8_results = classifier.classify(texts, engine=engine, quantize="int8")
        differences = [abs(a.probability - b.probability)
                       for a, b in zip(float_results, int8_results)]
        assert 0 < max(differences) < 0.1, engine  # quantized, and close
        assert abs(accuracy(int8_results) - accuracy(float_results)) <= 0.05, engine
    assert inference_engine.graph_path(classifier, "int8").is_file()
    # onnxruntime's quantizer advice, on the root logger, is not shown to kbert's users.
    assert not [record for record in caplog.records if record.name == "root"]


@needs_onnx
@pytest.mark.slow
def test_onnx_runtime_gives_the_keras_entities_masks_and_answers(preset, onnx_cache):
    tagger = BertTokenClassifier.from_preset(
        preset, num_classes=3, label_names=["O", "B-PER", "I-PER"])
    text = "Alice Smith sat near the river with Bob ."
    for keras_span, onnx_span in zip(tagger.tag(text, engine="keras"),
                                      tagger.tag(text, engine="onnxruntime"), strict=True):
        assert (onnx_span.label, onnx_span.start, onnx_span.end) == (
            keras_span.label, keras_span.start, keras_span.end)
        assert abs(onnx_span.score - keras_span.score) < TOLERANCE

    masked_lm = BertMaskedLM.from_preset(preset)
    text = "the [MASK] sat on the [MASK] ."
    targets = ["cat", "dog", "mat", "tree"]
    keras_result = masked_lm.fill_mask(text, targets=targets, top_k=4, engine="keras")
    onnx_result = masked_lm.fill_mask(text, targets=targets, top_k=4, engine="onnxruntime")
    for keras_mask, onnx_mask in zip(keras_result.masks, onnx_result.masks, strict=True):
        assert (onnx_mask.start, onnx_mask.end) == (keras_mask.start, keras_mask.end)
        onnx_scores = {c.token: c.probability for c in onnx_mask.candidates}
        for candidate in keras_mask.candidates:
            assert abs(onnx_scores[candidate.token] - candidate.probability) < TOLERANCE

    reader = BertQuestionAnswerer.from_preset(preset)
    question, context = "who sat ?", "the cat sat on the mat near the river ."
    keras_answer = reader.answer(question, context, top_k=3, engine="keras")
    onnx_answer = reader.answer(question, context, top_k=3, engine="onnxruntime")
    for keras_span, onnx_span in zip(keras_answer.answers, onnx_answer.answers, strict=True):
        assert (onnx_span.start, onnx_span.end, onnx_span.text) == (
            keras_span.start, keras_span.end, keras_span.text)
        assert abs(onnx_span.probability - keras_span.probability) < TOLERANCE
