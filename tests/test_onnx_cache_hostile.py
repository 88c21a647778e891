"""The ONNX Runtime engine's cache entry is trusted no more than a preset.

A graph is run only when it is the one kbert wrote (the sha256 in the entry's
manifest), read through the bounded reader (no link followed); a graph that is not is
made again with a warning. What ONNX Runtime cannot run, and outputs that are not the
model's (NaN, as many logits as another model's labels), are one `ValueError` sentence
naming the graph and the remedy; the command line prints it in one line.

A hand-made graph stands in for kbert's export (`onnx_cache_helpers`), so that which
graph answered shows in the label; these tests take a second each.
"""

import json
import os

import keras
import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="the ONNX Runtime engine is the optional kbert[onnx] extra")
pytest.importorskip("onnx", reason="the ONNX Runtime engine is the optional kbert[onnx] extra")

from onnx import TensorProto  # noqa: E402
from onnx import helper  # noqa: E402
from onnx import numpy_helper  # noqa: E402

from kbert.inference import inference_engine  # noqa: E402
from kbert.inference import onnx_export  # noqa: E402
from onnx_cache_helpers import KBERT_GRAPH  # noqa: E402
from onnx_cache_helpers import KBERT_ROW  # noqa: E402
from onnx_cache_helpers import MANIFEST_FILE  # noqa: E402
from onnx_cache_helpers import PLANTED_GRAPH  # noqa: E402
from onnx_cache_helpers import FakeExport  # noqa: E402
from onnx_cache_helpers import assert_recorded  # noqa: E402
from onnx_cache_helpers import constant_graph  # noqa: E402
from onnx_cache_helpers import entry_of  # noqa: E402
from onnx_cache_helpers import cache  # noqa: E402,F401 (a fixture)
from onnx_cache_helpers import classifier  # noqa: E402,F401 (a fixture)
from onnx_cache_helpers import first_use  # noqa: E402
from onnx_cache_helpers import plant  # noqa: E402
from onnx_cache_helpers import preset  # noqa: E402,F401 (a fixture)
from onnx_cache_helpers import serialized  # noqa: E402


@pytest.fixture
def exports(monkeypatch):
    """The export replaced by a `FakeExport`."""
    fake = FakeExport()
    monkeypatch.setattr(onnx_export, "export_graph", fake)
    return fake


# --- A graph kbert did not write is never run ------------------------------------------------


def test_a_graph_replaced_by_another_is_made_again_not_run(classifier, cache, exports, caplog):
    assert first_use(classifier).label == "c"
    graph = plant(classifier, PLANTED_GRAPH, recorded=False)
    assert first_use(classifier).label == "c"  # not the planted graph's "a"
    assert len(exports.paths) == 2
    assert_recorded(classifier, KBERT_GRAPH)
    assert f"The cached ONNX graph {str(graph)!r} is not the one kbert wrote" in caplog.text
    assert "it is made again" in caplog.text


@pytest.mark.skipif(keras.config.backend() == "tensorflow",
                    reason="on TensorFlow 'auto' runs Keras whatever the cache holds")
def test_auto_refuses_a_replaced_graph_and_makes_it_again(classifier, cache, exports,
                                                         monkeypatch, caplog):
    monkeypatch.setattr(inference_engine, "AUTO_PREFERS_ONNX_RUNTIME", True)
    monkeypatch.setattr(inference_engine, "on_cpu", lambda: True)
    first_use(classifier)
    inference_engine._ENGINES.pop(classifier, None)
    assert inference_engine.engine_model(classifier) is not classifier  # the cached graph
    graph = plant(classifier, PLANTED_GRAPH, recorded=False)
    inference_engine._ENGINES.pop(classifier, None)
    assert classifier.classify("the cat sat").label == "c"  # not the planted graph's "a"
    assert len(exports.paths) == 2  # a small model's graph is made before it answers
    assert_recorded(classifier, KBERT_GRAPH)
    assert f"The cached ONNX graph {str(graph)!r} is not the one kbert wrote" in caplog.text
    assert "it is made again" in caplog.text


def test_a_linked_graph_is_never_read(classifier, cache, exports, tmp_path):
    outside = tmp_path / "outside.onnx"
    outside.write_bytes(PLANTED_GRAPH)
    graph = plant(classifier, PLANTED_GRAPH)  # recorded: only the link is wrong
    graph.unlink()
    graph.symlink_to(outside)
    assert first_use(classifier).label == "c"
    assert_recorded(classifier, KBERT_GRAPH)  # the link itself replaced
    assert outside.read_bytes() == PLANTED_GRAPH


def test_a_linked_entry_folder_is_not_written_through(classifier, cache, exports, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "model.onnx").write_bytes(PLANTED_GRAPH)
    entry = entry_of(classifier)
    entry.parent.mkdir(parents=True)
    entry.symlink_to(outside, target_is_directory=True)
    assert first_use(classifier).label == "c"
    assert not entry.is_symlink() and sorted(os.listdir(outside)) == ["model.onnx"]
    assert (outside / "model.onnx").read_bytes() == PLANTED_GRAPH


@pytest.mark.parametrize("damage", ["empty", "truncated", "garbage", "no manifest",
                                    "manifest of other weights", "deep manifest"])
def test_a_damaged_entry_is_made_again_with_one_warning(classifier, cache, exports, damage,
                                                        caplog):
    first_use(classifier)
    entry = entry_of(classifier)
    graph, manifest = entry / "model.onnx", entry / MANIFEST_FILE
    if damage in ("empty", "truncated", "garbage"):
        graph.write_bytes({"empty": b"", "truncated": KBERT_GRAPH[:len(KBERT_GRAPH) // 2],
                           "garbage": b"\x00\xff kbert" * 64}[damage])
    elif damage == "no manifest":
        manifest.unlink()
    elif damage == "manifest of other weights":
        manifest.write_text(manifest.read_text().replace('"weights_sha256": "', '"weights_sha256": "0'))
    else:
        manifest.write_text("[" * 100_000)
    assert first_use(classifier).label == "c"
    assert_recorded(classifier, KBERT_GRAPH)
    warnings = [record for record in caplog.records if record.levelname == "WARNING"]
    assert len(warnings) == 1 and str(graph) in warnings[0].getMessage()


def test_a_graph_larger_than_the_model_allows_is_not_read(classifier, cache, exports,
                                                          monkeypatch):
    first_use(classifier)
    from kbert.inference import onnx_graph_checks

    monkeypatch.setattr(onnx_graph_checks, "GRAPH_OVERHEAD_BYTES", 0)
    limit = onnx_graph_checks.graph_size_limit(classifier)
    plant(classifier, KBERT_GRAPH + b"\0" * limit)  # recorded, but too large to read
    assert first_use(classifier).label == "c"
    assert_recorded(classifier, KBERT_GRAPH)


# --- What ONNX Runtime cannot run, or runs into outputs not the model's: one sentence ----------


def _custom_op_graph():
    return serialized(constant_graph(KBERT_ROW, extra_nodes=[
        helper.make_node("Steal", ["logits"], ["stolen"], domain="com.example.hostile")],
        opsets=[helper.make_opsetid("com.example.hostile", 1)]))


def _external_data_graph():
    graph = constant_graph(KBERT_ROW)
    row = graph.graph.initializer[2]
    row.ClearField("raw_data")
    row.ClearField("float_data")
    row.data_location = TensorProto.EXTERNAL
    location = row.external_data.add()
    location.key, location.value = "location", "secret.bin"
    return serialized(graph)


def _huge_memory_graph():
    graph = constant_graph(KBERT_ROW)
    # 2**60 floats (4 EiB): no machine has them, so asking fails at once.
    graph.graph.initializer.append(numpy_helper.from_array(np.array([1 << 60], np.int64), "huge"))
    graph.graph.node.insert(0, helper.make_node(
        "ConstantOfShape", ["huge"], ["filled"],
        value=numpy_helper.from_array(np.array([0.0], np.float32))))
    graph.graph.node.insert(1, helper.make_node("ReduceSum", ["filled"], ["zero"], keepdims=0))
    del graph.graph.initializer[1]  # "zero" now comes from the huge tensor
    return serialized(graph)


def _logit_a_token_graph():
    """Logits (B, L): as many as the text has tokens, known only when it runs."""
    graph = constant_graph(KBERT_ROW)
    del graph.graph.node[1:]
    graph.graph.node.append(helper.make_node("Mul", ["as_float", "zero"], ["logits"]))
    graph.graph.output[0].type.tensor_type.shape.dim[1].dim_param = "length"
    del graph.graph.initializer[2]
    del graph.graph.initializer[0]
    return serialized(graph)


HOSTILE_GRAPHS = {
    "protobuf that does not parse": (lambda: b"\x08" + b"\xff" * 40,
                                     "ONNX Runtime cannot load the graph"),
    "no graph in it": (lambda: b"", "ONNX Runtime cannot load the graph"),
    "custom-domain operator": (_custom_op_graph, "ONNX Runtime cannot load the graph"),
    "external data": (_external_data_graph, "ONNX Runtime cannot load the graph"),
    "asks for 4 EiB": (_huge_memory_graph, "ONNX Runtime failed running the graph"),
    "NaN logits": (lambda: serialized(constant_graph([np.nan, 0.0, 1.0])),
                   "NaN or infinite values in `logits`"),
    "5 logits for 3 labels, declared": (lambda: serialized(constant_graph([0.0] * 5)),
                                        "its output `logits` has the shape"),
    "one logit a token, undeclared": (_logit_a_token_graph, "gave `logits` of shape (1, 5)"),
    "other inputs": (lambda: serialized(constant_graph(KBERT_ROW)).replace(b"padding_mask",
                                                                           b"attention_ma"),
                     "its inputs are"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_GRAPHS))
def test_a_recorded_graph_onnx_runtime_cannot_run_is_one_sentence(classifier, cache, kind,
                                                                  tmp_path, monkeypatch):
    make, message = HOSTILE_GRAPHS[kind]
    monkeypatch.chdir(tmp_path)  # where a graph loaded from bytes would find external data
    (tmp_path / "secret.bin").write_bytes(np.array([7, 8, 9], np.float32).tobytes())
    graph = plant(classifier, make())
    with pytest.raises(ValueError) as raised:
        first_use(classifier)
    text = str(raised.value)
    assert message in text and repr(str(graph)) in text, text
    assert "engine='keras'" in text and "\n" not in text
    assert raised.value.__cause__ is None
    assert raised.value.__context__ is None or raised.value.__suppress_context__


@pytest.mark.parametrize("kind", ["NaN logits", "custom-domain operator"])
def test_the_command_line_prints_one_line(preset, classifier, cache, kind, capsys):
    from kbert.cli import main

    graph = plant(classifier, HOSTILE_GRAPHS[kind][0]())
    status = main(["classify", "--model", str(preset), "--engine", "onnxruntime", "the cat sat"])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert status != 0 and captured.out == ""
    assert lines[-1].startswith("kbert classify: error: ") and str(graph) in lines[-1]
    assert "Traceback" not in captured.err and not [
        line for line in lines if "onnxruntime" in line.lower() and "kbert" not in line]


def test_int8_graphs_are_recorded_too(classifier, cache, exports, caplog):
    inference_engine._ENGINES.pop(classifier, None)
    assert classifier.classify("the cat sat", engine="onnxruntime", quantize="int8").label == "c"
    entry = entry_of(classifier)
    manifest = json.loads((entry / MANIFEST_FILE).read_text())
    assert sorted(manifest["graphs"]) == ["model.int8.onnx", "model.onnx"]
    (entry / "model.int8.onnx").write_bytes(PLANTED_GRAPH)
    inference_engine._ENGINES.pop(classifier, None)
    assert classifier.classify("the cat sat", engine="onnxruntime", quantize="int8").label == "c"
    assert "model.int8.onnx' is not the one kbert wrote" in caplog.text
