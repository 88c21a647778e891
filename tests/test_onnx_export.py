"""ONNX export of every head: ONNX Runtime gives the Keras model's outputs within 1e-4.

The graph is written from the model's weights in this process, on whichever backend
the pass runs, with the `onnx` package only: each head and each setting the layers
honour is compared with the model of this backend. One test runs `kbert export` in a
process that cannot import TensorFlow or tf2onnx.
"""

import errno
import hashlib
import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from model_helpers import TINY
from model_helpers import make_inputs
from process_helpers import on_the_process_pass

pytest.importorskip("onnxruntime", reason="ONNX export is the optional kbert[onnx] extra")
pytest.importorskip("onnx", reason="ONNX export is the optional kbert[onnx] extra")

from kbert.inference.onnx_export import export_graph  # noqa: E402
from kbert.inference.onnx_graph_builder import OnnxGraphBuilder  # noqa: E402
from kbert.models import BertBackbone  # noqa: E402
from kbert.models import BertClassifier  # noqa: E402
from kbert.models import BertMaskedLM  # noqa: E402
from kbert.models import BertMultipleChoice  # noqa: E402
from kbert.models import BertPretrainer  # noqa: E402
from kbert.models import BertQuestionAnswerer  # noqa: E402
from kbert.models import BertTokenClassifier  # noqa: E402

HEADS = {
    "backbone": lambda backbone: backbone,
    "masked_lm": lambda backbone: BertMaskedLM(backbone),
    "pretrainer": lambda backbone: BertPretrainer(backbone),
    "classifier": lambda backbone: BertClassifier(backbone, num_classes=3),
    "token_classifier": lambda backbone: BertTokenClassifier(backbone, num_classes=5),
    "question_answerer": lambda backbone: BertQuestionAnswerer(backbone),
    "multiple_choice": lambda backbone: BertMultipleChoice(backbone),
}
# The dynamic axes of the inputs, by name (and rank for the backbone's three).
AXES = {2: ["batch", "length"], 3: ["batch", "choices", "length"]}
MASK_AXES = ["batch", "masks"]


def _session(path):
    import onnxruntime

    return onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def _inputs(model, batch_size, length, seed):
    names = set(model.input)
    inputs = make_inputs(batch_size, length, seed=seed,
                         num_masks=3 if "mask_positions" in names else 0)
    if len(model.input["token_ids"].shape) == 3:  # (B, choices, L)
        more = make_inputs(batch_size, length, seed=seed + 1)
        inputs = {name: np.stack([inputs[name], more[name]], axis=1) for name in inputs}
    return {name: inputs[name] for name in names}


def _distinct_weights(model, seed=0, scale=0.2):
    """Every weight drawn at random: biases and LayerNorm offsets that are not zero and
    scales that are not one show a weight read from the wrong place."""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(rng.normal(0.0, scale, variable.shape).astype("float32"))
    return model


def _assert_parity(model, path):
    session = _session(path)
    assert {graph_input.name for graph_input in session.get_inputs()} == set(model.input)
    for graph_input in session.get_inputs():
        expected = (MASK_AXES if graph_input.name == "mask_positions"
                    else AXES[len(model.input[graph_input.name].shape)])
        assert graph_input.shape == expected and graph_input.type == "tensor(int32)"
    # Two batch sizes and lengths: the batch and length axes are dynamic.
    for batch_size, length, seed in ((2, 9, 0), (5, 17, 1)):
        inputs = _inputs(model, batch_size, length, seed)
        expected = model.predict_on_batch(inputs)
        names = [output.name for output in session.get_outputs()]
        outputs = dict(zip(names, session.run(names, inputs)))
        if not isinstance(expected, dict):
            expected = {"logits": expected}
        assert names == sorted(expected)
        for name, value in expected.items():
            assert outputs[name].dtype == np.float32
            np.testing.assert_allclose(outputs[name], np.asarray(value), atol=1e-4, rtol=0)


@pytest.mark.parametrize("head", sorted(HEADS))
def test_every_head_exports_with_outputs_equal_to_the_keras_model(head, tmp_path):
    model = _distinct_weights(HEADS[head](BertBackbone(**TINY)))
    path = export_graph(model, tmp_path / "model.onnx")
    _assert_parity(model, path)


SETTINGS = {
    "approximate GELU": dict(activation="gelu_approximate"),
    "relu": dict(activation="relu"),
    "silu": dict(activation="silu"),
    "tanh": dict(activation="tanh"),
    "epsilon and heads": dict(layer_norm_epsilon=1e-3, num_heads=2, intermediate_size=20),
}


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_every_setting_the_layers_read_is_in_the_graph(setting, tmp_path):
    backbone = BertBackbone(**{**TINY, **SETTINGS[setting]})
    model = _distinct_weights(BertClassifier(backbone, num_classes=2))
    _assert_parity(model, export_graph(model, tmp_path / "model.onnx"))


def test_the_masked_lm_head_keeps_its_own_activation_and_epsilon(tmp_path):
    model = BertMaskedLM(BertBackbone(**TINY), head_activation="gelu_approximate",
                         head_layer_norm_epsilon=1e-2)
    model = _distinct_weights(model, scale=0.5)
    _assert_parity(model, export_graph(model, tmp_path / "model.onnx"))


def test_the_graph_is_a_valid_onnx_file_holding_the_weights(tmp_path):
    import onnx
    from onnx import numpy_helper

    model = _distinct_weights(BertMaskedLM(BertBackbone(**TINY)))
    path = export_graph(model, tmp_path / "model.onnx")
    onnx.checker.check_model(str(path), full_check=True)
    stored = {tensor.name: numpy_helper.to_array(tensor)
              for tensor in onnx.load(str(path)).graph.initializer}
    backbone = model.backbone
    embeddings = keras.ops.convert_to_numpy(backbone.token_embedding.embeddings)
    # The tied embedding is stored once, under its weight-layout path.
    np.testing.assert_array_equal(stored["backbone/embeddings/token_embedding/embeddings"],
                                  embeddings)
    weights = [name for name in stored if not name.startswith("constant/")]
    assert len(weights) == len(model.weights)


def test_the_writer_reads_each_weight_once_in_turn(tmp_path):
    # Streamed: one weight in memory at a time, never all of them.
    model = _distinct_weights(BertClassifier(BertBackbone(**TINY), num_classes=2))
    from kbert.inference.onnx_bert_graph import bert_graph

    graph = bert_graph(model)
    reads = []
    read_weight = graph.read_weight
    graph.read_weight = lambda name: reads.append(name) or read_weight(name)
    with open(tmp_path / "model.onnx", "wb") as file:
        graph.write(file)
    assert reads == list(graph.weights) and len(set(reads)) == len(reads)
    _assert_parity(model, tmp_path / "model.onnx")


def test_a_bfloat16_model_is_refused_in_one_sentence(tmp_path):
    model = BertClassifier(BertBackbone(**TINY, dtype="bfloat16"), num_classes=2,
                           dtype="bfloat16")
    with pytest.raises(ValueError, match="needs a float32 model"):
        export_graph(model, tmp_path / "model.onnx")


def test_what_the_graph_cannot_express_is_refused_in_one_sentence(tmp_path):
    graph = OnnxGraphBuilder(lambda name: None, "graph")
    with pytest.raises(ValueError, match="cannot write the activation 'swish'"):
        graph.activation("x", "swish", "layer")
    inputs = keras.Input(shape=(4,), name="x")
    other = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    with pytest.raises(ValueError, match="writes the heads of"):
        export_graph(other, tmp_path / "model.onnx")
    assert os.listdir(tmp_path) == []


def test_a_graph_protobuf_cannot_read_is_refused_before_any_weight_is_read(tmp_path):
    graph = OnnxGraphBuilder(lambda name: pytest.fail("no weight is read"), "graph")
    graph.weight("huge", (2**29 + 1,))  # 2 GiB of float32 and more
    with open(tmp_path / "model.onnx", "wb") as file:
        with pytest.raises(ValueError, match="ONNX Runtime reads at most 2147483647 bytes"):
            graph.write(file)
    assert (tmp_path / "model.onnx").stat().st_size == 0


def test_a_full_disk_names_the_graph_and_leaves_no_temporary(tmp_path, monkeypatch):
    def full(self, file):
        file.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device", file.name)

    monkeypatch.setattr(OnnxGraphBuilder, "write", full)
    path = tmp_path / "model.onnx"
    with pytest.raises(OSError) as raised:
        export_graph(BertClassifier(BertBackbone(**TINY), num_classes=2), path)
    assert raised.value.errno == errno.ENOSPC
    assert raised.value.strerror == f"No space left on the device while writing {str(path)!r}"
    assert os.listdir(tmp_path) == []


def test_onnx_runtime_fuses_the_exported_layers(tmp_path):
    # The layers are written in the forms ONNX Runtime fuses: one LayerNormalization
    # (or SkipLayerNormalization) per layer norm, one BiasGelu per feed-forward block,
    # every Dense one MatMul over the (B, L, H) activations.
    import onnx
    import onnxruntime

    model = _distinct_weights(BertClassifier(BertBackbone(**TINY), num_classes=3))
    path = export_graph(model, tmp_path / "model.onnx")
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    nodes = onnx.load(str(tmp_path / "optimized.onnx")).graph.node
    counts = {}
    for node in nodes:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    layers = TINY["num_layers"]
    layer_norms = counts.get("LayerNormalization", 0) + counts.get("SkipLayerNormalization", 0)
    assert layer_norms == 2 * layers + 1, counts  # the embeddings' and two per layer
    assert counts.get("BiasGelu", 0) + counts.get("Gelu", 0) == layers, counts
    assert counts.get("FusedMatMul", 0) == layers, counts  # scores, scaled, per layer
    assert not {"Erf", "Div", "ReduceMean", "Sqrt", "Pow"} & set(counts), counts
    # tf2onnx's graph had 230 nodes a layer after the optimizer, its fusable form 38.
    assert len(nodes) < 35 * layers, counts


def test_int8_quantization_reads_the_graph(tmp_path):
    import onnx
    from onnxruntime.quantization import QuantType
    from onnxruntime.quantization import quantize_dynamic

    model = _distinct_weights(BertClassifier(BertBackbone(**TINY), num_classes=3), scale=0.05)
    path = export_graph(model, tmp_path / "model.onnx")
    quantize_dynamic(onnx.load(str(path)), str(tmp_path / "int8.onnx"),
                     weight_type=QuantType.QInt8)
    inputs = _inputs(model, 4, 12, 0)
    expected = _session(path).run(None, inputs)[0]
    quantized = _session(tmp_path / "int8.onnx").run(None, inputs)[0]
    assert quantized.shape == expected.shape
    np.testing.assert_allclose(quantized, expected, atol=0.05)


def _classifier_preset(folder):
    from kbert.tokenizer import BertTokenizer

    vocabulary = folder / "vocab.txt"
    vocabulary.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                                    + [f"w{index}" for index in range(92)]) + "\n")
    model = _distinct_weights(BertClassifier(BertBackbone(**TINY), label_names=["no", "yes"]))
    model.tokenizer = BertTokenizer(str(vocabulary))
    model.save_to_preset(folder / "preset")
    return model, folder / "preset"


def test_the_command_writes_a_usable_folder_on_any_backend(tmp_path, capsys):
    from kbert.cli import main

    model, preset = _classifier_preset(tmp_path)
    assert main(["export", str(preset), str(tmp_path / "onnx"), "--format", "onnx"]) == 0
    folder = tmp_path / "onnx"
    assert {"model.onnx", "vocab.txt", "config.json"} <= {path.name for path in folder.iterdir()}
    assert not (folder / "model.weights.h5").exists()  # the graph holds the weights
    metadata = json.loads((folder / "metadata.json").read_text())
    assert "weights_sha256" not in metadata  # it would name the file left out
    graph_digest = hashlib.sha256((folder / "model.onnx").read_bytes()).hexdigest()
    assert metadata["onnx_sha256"] == graph_digest
    assert metadata["parameter_count"] == model.count_params()  # not of the weights left out
    assert json.loads((folder / "config.json").read_text())["task"]["label_names"] == ["no", "yes"]
    _assert_parity(model, folder / "model.onnx")
    # A second export to the same folder needs --overwrite.
    capsys.readouterr()
    assert main(["export", str(preset), str(folder), "--format", "onnx"]) != 0
    assert "--overwrite" in capsys.readouterr().err


def test_a_full_disk_in_the_command_is_one_sentence_once(tmp_path, monkeypatch, capsys):
    from kbert.cli import main

    def full(self, file):
        raise OSError(errno.ENOSPC, "No space left on device", file.name)

    _, preset = _classifier_preset(tmp_path)
    monkeypatch.setattr(OnnxGraphBuilder, "write", full)
    capsys.readouterr()
    assert main(["export", str(preset), str(tmp_path / "onnx"), "--format", "onnx"]) != 0
    error = capsys.readouterr().err
    assert error.count("error:") == 1 and error.count("No space left") == 1, error
    assert f"while writing {str(tmp_path / 'onnx')!r}" in error
    assert not (tmp_path / "onnx").exists()


# A process in which TensorFlow and tf2onnx cannot be imported: `kbert export`, then
# the graph run by ONNX Runtime.
_WITHOUT_TENSORFLOW = """
import importlib.abc, sys

class NoTensorFlow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("tensorflow", "tf2onnx", "tf_keras"):
            raise ImportError(f"{name} is blocked in this test")
        return None

sys.meta_path.insert(0, NoTensorFlow())
from kbert.cli import main
code = main(["export", sys.argv[1], sys.argv[2], "--format", "onnx"])
import onnxruntime
session = onnxruntime.InferenceSession(sys.argv[2] + "/model.onnx",
                                       providers=["CPUExecutionProvider"])
print("OUTPUTS", [output.name for output in session.get_outputs()])
print("LOADED", sorted(name.split(".")[0] for name in sys.modules
                       if name.split(".")[0] in ("tensorflow", "tf2onnx")))
sys.exit(code)
"""


@on_the_process_pass("its process runs on JAX whatever the pass")
def test_the_command_exports_without_tensorflow(tmp_path):
    _, preset = _classifier_preset(tmp_path)
    environment = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_TENSORFLOW, str(preset), str(tmp_path / "onnx")],
        env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "OUTPUTS ['logits']" in done.stdout and "LOADED []" in done.stdout, done.stdout
