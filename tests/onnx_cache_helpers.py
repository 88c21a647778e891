"""A tiny classifier, graphs that stand in for its ONNX export, and its cache entry, for
the tests of the ONNX Runtime engine's cache (test_onnx_cache_hostile, test_onnx_cache_writes).

The graphs have the classifier's inputs and logits a constant row, so that which graph
answered shows in the label: "c" for the one kbert's (stand-in) export writes, "a" for
one planted in the cache. Imported by name, as the other helper modules here; it needs
onnx (the tests skip without it first).
"""

import hashlib
import json
import os
import pathlib

import numpy as np
import pytest
from onnx import TensorProto
from onnx import helper
from onnx import numpy_helper

from fine_tuning_data import make_tiny_preset
from kbert.inference import inference_engine
from kbert.models import BertClassifier

LABELS = ["a", "b", "c"]
# The entry's record of its graphs (`kbert.inference.onnx_cache_entry`).
MANIFEST_FILE = "manifest.json"
INPUTS = ("token_ids", "segment_ids", "padding_mask")
# What kbert's export answers ("c"), and what a planted graph answers ("a").
KBERT_ROW, PLANTED_ROW = [0.0, 0.0, 5.0], [9.0, 0.0, 0.0]


def make_classifier_preset(folder):
    """A tiny classifier with three labels, saved as a preset the command line runs."""
    from kbert.models import BertClassifier

    folder = pathlib.Path(folder)
    make_tiny_preset(folder / "backbone")
    model = BertClassifier.from_preset(folder / "backbone", num_classes=3, label_names=LABELS)
    model.freshly_initialized_heads = []  # a stand-in for a fine-tuned head
    model.save_to_preset(folder / "classifier")
    return folder / "classifier"


def constant_graph(row, declared=None, extra_nodes=(), opsets=()):
    """A graph with the classifier's inputs whose logits are `row` for every text."""
    row = np.asarray(row, np.float32)[None]
    nodes = [
        helper.make_node("Cast", ["token_ids"], ["as_float"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["as_float", "axes"], ["summed"], keepdims=1),
        helper.make_node("Mul", ["summed", "zero"], ["zeros"]),  # (B, 1)
        helper.make_node("Add", ["zeros", "row"], ["logits"]),  # (B, labels)
        *extra_nodes,
    ]
    initializers = [numpy_helper.from_array(np.array([1], np.int64), "axes"),
                    numpy_helper.from_array(np.array(0, np.float32), "zero"),
                    numpy_helper.from_array(row, "row")]
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT32, ["batch", "length"])
              for name in INPUTS]
    output = helper.make_tensor_value_info(
        "logits", TensorProto.FLOAT, ["batch", row.shape[1] if declared is None else declared])
    graph = helper.make_graph(nodes, "constant", inputs, [output], initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), *opsets])


def serialized(model):
    return model.SerializeToString()


KBERT_GRAPH = serialized(constant_graph(KBERT_ROW))
PLANTED_GRAPH = serialized(constant_graph(PLANTED_ROW))


class FakeExport:
    """Stands in for `export_graph`: writes `graph`; `paths` lists what it wrote."""

    def __init__(self):
        self.graph = KBERT_GRAPH
        self.paths = []

    def __call__(self, model, path, tokenizer=None):
        pathlib.Path(path).write_bytes(self.graph)
        self.paths.append(pathlib.Path(path))


def first_use(classifier):
    """What the classifier answers on ONNX Runtime in a process that has not run it yet."""
    inference_engine._ENGINES.pop(classifier, None)
    return classifier.classify("the cat sat", engine="onnxruntime")


def entry_of(classifier):
    return inference_engine.graph_path(classifier).parent


def plant(classifier, data, recorded=True):
    """`data` as the classifier's cached graph; `recorded`: with a manifest that records
    its digest (what someone who can write the cache can forge)."""
    entry = entry_of(classifier)
    entry.mkdir(parents=True, exist_ok=True)
    graph = entry / "model.onnx"
    if os.path.lexists(graph):
        graph.unlink()
    graph.write_bytes(data)
    if recorded:
        manifest = {"format": "kbert-onnx-cache", "format_version": 1, "kbert_version": "0",
                    "weights_sha256": inference_engine.weights_checksum(classifier),
                    "graphs": {"model.onnx": {"sha256": hashlib.sha256(data).hexdigest(),
                                              "bytes": len(data)}}}
        (entry / MANIFEST_FILE).write_text(json.dumps(manifest))
    return graph


def assert_recorded(classifier, data):
    entry = entry_of(classifier)
    manifest = json.loads((entry / MANIFEST_FILE).read_text())
    assert (entry / "model.onnx").read_bytes() == data
    assert not (entry / "model.onnx").is_symlink()
    assert manifest["graphs"]["model.onnx"] == {
        "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


# Fixtures both test files import by name.


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    return make_classifier_preset(tmp_path_factory.mktemp("onnx-cache"))


@pytest.fixture(scope="module")
def classifier(preset):
    return BertClassifier.from_preset(preset)


@pytest.fixture
def cache(tmp_path, monkeypatch, classifier):
    """An empty kbert cache, and no graph of the classifier made in this process yet."""
    monkeypatch.setenv("KBERT_CACHE", str(tmp_path / "cache"))
    inference_engine._ENGINES.pop(classifier, None)
    yield tmp_path / "cache"
    inference_engine._ENGINES.pop(classifier, None)
