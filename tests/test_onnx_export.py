"""ONNX export of every head: ONNX Runtime gives the Keras model's outputs within 1e-4.

On TensorFlow every head is exported in this process (Keras' exporter, tf2onnx). On
JAX and PyTorch the export runs in a child process on TensorFlow (the backend Keras'
ONNX exporter works on for these models): those passes export one head through the
`kbert export` command line, and every head in one child process, each compared with
the model of their own backend.
"""

import hashlib
import json

import keras
import numpy as np
import pytest

from model_helpers import TINY
from model_helpers import make_inputs

pytest.importorskip("onnxruntime", reason="ONNX export is the optional kbert[onnx] extra")
pytest.importorskip("onnx", reason="ONNX export is the optional kbert[onnx] extra")
pytest.importorskip("tf2onnx", reason="ONNX export is the optional kbert[onnx] extra")
pytest.importorskip("tensorflow", reason="kbert's ONNX export runs on TensorFlow")

from kbert.inference.onnx_export import EXPORT_BACKEND  # noqa: E402
from kbert.inference.onnx_export import export_graph  # noqa: E402
from kbert.models import BertBackbone  # noqa: E402
from kbert.models import BertClassifier  # noqa: E402
from kbert.models import BertMaskedLM  # noqa: E402
from kbert.models import BertMultipleChoice  # noqa: E402
from kbert.models import BertPretrainer  # noqa: E402
from kbert.models import BertQuestionAnswerer  # noqa: E402
from kbert.models import BertTokenClassifier  # noqa: E402

on_tensorflow = pytest.mark.skipif(
    keras.config.backend() != EXPORT_BACKEND,
    reason="in-process export is TensorFlow's; the other backends export through a child",
)

HEADS = {
    "backbone": lambda backbone: backbone,
    "masked_lm": lambda backbone: BertMaskedLM(backbone),
    "pretrainer": lambda backbone: BertPretrainer(backbone),
    "classifier": lambda backbone: BertClassifier(backbone, num_classes=3),
    "token_classifier": lambda backbone: BertTokenClassifier(backbone, num_classes=5),
    "question_answerer": lambda backbone: BertQuestionAnswerer(backbone),
    "multiple_choice": lambda backbone: BertMultipleChoice(backbone),
}


def _session(path):
    import onnxruntime

    return onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def _inputs(model, batch_size, length, seed):
    names = set(model.input)
    inputs = make_inputs(batch_size, length, seed=seed,
                         num_masks=3 if "mask_positions" in names else 0)
    if "mask_positions" in names and "mask_positions" not in inputs:
        inputs["mask_positions"] = np.zeros((batch_size, 3), dtype="int32")
    if len(model.input["token_ids"].shape) == 3:  # (B, choices, L)
        more = make_inputs(batch_size, length, seed=seed + 1)
        inputs = {name: np.stack([inputs[name], more[name]], axis=1) for name in inputs}
    return {name: inputs[name] for name in names}


def _assert_parity(model, path):
    session = _session(path)
    assert {graph_input.name for graph_input in session.get_inputs()} == set(model.input)
    for graph_input in session.get_inputs():
        assert graph_input.shape[0] == "batch" and graph_input.type == "tensor(int32)"
    # Shapes the export never saw: the batch and length axes are dynamic.
    for batch_size, length, seed in ((2, 9, 0), (5, 17, 1)):
        inputs = _inputs(model, batch_size, length, seed)
        expected = model.predict_on_batch(inputs)
        names = [output.name for output in session.get_outputs()]
        outputs = dict(zip(names, session.run(names, inputs)))
        if not isinstance(expected, dict):
            expected = {"logits": expected}
        assert set(outputs) == set(expected)
        for name, value in expected.items():
            np.testing.assert_allclose(outputs[name], np.asarray(value), atol=1e-4, rtol=0)


@on_tensorflow
@pytest.mark.slow
@pytest.mark.parametrize("head", sorted(HEADS))
def test_every_head_exports_with_outputs_equal_to_the_keras_model(head, tmp_path):
    model = HEADS[head](BertBackbone(**TINY))
    path = export_graph(model, tmp_path / "model.onnx")
    _assert_parity(model, path)


@pytest.mark.slow
def test_the_command_writes_a_usable_folder_on_any_backend(tmp_path, capsys):
    from kbert.cli import main
    from kbert.tokenizer import BertTokenizer

    vocabulary = tmp_path / "vocab.txt"
    vocabulary.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                                    + [f"w{index}" for index in range(92)]) + "\n")
    model = BertClassifier(BertBackbone(**TINY), label_names=["no", "yes"])
    model.tokenizer = BertTokenizer(str(vocabulary))
    model.save_to_preset(tmp_path / "preset")
    assert main(["export", str(tmp_path / "preset"), str(tmp_path / "onnx"),
                 "--format", "onnx"]) == 0
    folder = tmp_path / "onnx"
    assert {"model.onnx", "vocab.txt", "config.json"} <= {path.name for path in folder.iterdir()}
    assert not (folder / "model.weights.h5").exists()  # the graph holds the weights
    metadata = json.loads((folder / "metadata.json").read_text())
    assert "weights_sha256" not in metadata  # it would name the file left out
    graph_digest = hashlib.sha256((folder / "model.onnx").read_bytes()).hexdigest()
    assert metadata["onnx_sha256"] == graph_digest
    assert json.loads((folder / "config.json").read_text())["task"]["label_names"] == ["no", "yes"]
    _assert_parity(model, folder / "model.onnx")
    # A second export to the same folder needs --overwrite.
    capsys.readouterr()
    assert main(["export", str(tmp_path / "preset"), str(folder), "--format", "onnx"]) != 0
    assert "--overwrite" in capsys.readouterr().err


def test_a_bfloat16_model_is_refused_in_one_sentence(tmp_path):
    model = BertClassifier(BertBackbone(**TINY, dtype="bfloat16"), num_classes=2,
                           dtype="bfloat16")
    with pytest.raises(ValueError, match="needs a float32 model"):
        export_graph(model, tmp_path / "model.onnx")


def _distinct_weights(model, seed=0):
    """Every weight drawn at random, so that no two initializers are equal (tf2onnx
    shares equal constants, which hides what a trained model's graph looks like)."""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(rng.normal(0.0, 0.05, variable.shape).astype("float32"))
    return model


@on_tensorflow
@pytest.mark.slow
def test_onnx_runtime_fuses_the_exported_layers(tmp_path):
    # The layers are exported in the forms ONNX Runtime fuses: one LayerNormalization
    # (or SkipLayerNormalization) per layer norm, one BiasGelu per feed-forward block,
    # every Dense one MatMul over the (B, L, H) activations (no Tensordot reshapes).
    import onnx
    import onnxruntime

    model = _distinct_weights(BertClassifier(BertBackbone(**TINY), num_classes=3))
    path = export_graph(model, tmp_path / "model.onnx")
    _assert_parity(model, path)
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
    assert not {"Erf", "Erfc", "GlobalAveragePool", "ReduceProd"} & set(counts), counts
    assert not [node.name for node in nodes if "Tensordot" in node.name]
    # Without the forms the same model's optimized graph had 3x the nodes.
    assert len(nodes) < 70 * layers, counts


_EXPORT_EVERY_PRESET = """
import sys
from kbert.checkpoints.kbert_preset import read_preset_config
from kbert.inference.onnx_export import export_graph
from kbert.models import BertBackbone, BertTask
for folder in sys.argv[1:]:
    is_backbone = read_preset_config(folder)["class_name"] == BertBackbone.__name__
    model = (BertBackbone if is_backbone else BertTask).from_preset(folder)
    export_graph(model, folder + "/model.onnx")
"""


@pytest.mark.slow
@pytest.mark.skipif(keras.config.backend() == EXPORT_BACKEND,
                    reason="the TensorFlow pass compares every head in its own process")
def test_every_head_of_this_backend_exports_with_equal_outputs(tmp_path):
    # Weights made on this backend, saved, exported on TensorFlow (one child process for
    # all heads, as the engine's export child does), run by ONNX Runtime: the outputs
    # of this backend's model.
    import os
    import subprocess
    import sys

    models = {head: _distinct_weights(make(BertBackbone(**TINY)), seed)
              for seed, (head, make) in enumerate(sorted(HEADS.items()))}
    folders = []
    for head, model in models.items():
        model.save_to_preset(tmp_path / head)
        folders.append(str(tmp_path / head))
    environment = dict(os.environ, KERAS_BACKEND=EXPORT_BACKEND, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, "-c", _EXPORT_EVERY_PRESET, *folders],
                          env=environment, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    for head, model in models.items():
        _assert_parity(model, tmp_path / head / "model.onnx")
