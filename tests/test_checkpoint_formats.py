"""Every checkpoint format's weight table, both ways, on plain data.

For each format and each kbert class the format carries, a model with every variable
drawn at random (LayerNorms and biases included, so a swapped or skipped tensor shows) is
written by the format's writer (Google's, which kbert does not export to, with
TensorFlow's TF1 saver under the names the table gives), read back, and compared bit for
bit both ways: data -> files -> data, and files -> data -> files. Then one tensor of the
files gets a wrong shape: the reader must refuse it, naming it, before any tensor's data
is read (the libraries' data reads are replaced by failures).
"""

import inspect
import json
import pathlib
import subprocess
import sys

import h5py
import numpy as np
import pytest

from kbert.architecture import bert_layout
from kbert.checkpoints import google
from kbert.checkpoints import huggingface
from kbert.checkpoints import huggingface_config
from kbert.checkpoints import kbert_preset
from kbert.checkpoints import keras_hub_preset
from kbert.checkpoints.checkpoint_data import CheckpointData
from kbert.checkpoints.tokenizer_data import TOKENIZER_DEFAULTS
from kbert.checkpoints.tokenizer_data import TokenizerData
from kbert.checkpoints.weights_file import read_weights
from kbert.checkpoints.weights_file import write_weights
from kbert.model_table import BUILT_IN_CLASSES
from kbert.model_table import model_class
from kbert.tokenizer import BertTokenizer
from test_google_import import GOOGLE_CONFIG
from test_google_import import VOCABULARY
from test_google_import import write_google_checkpoint

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
CONFIG = huggingface_config.config_from_huggingface(GOOGLE_CONFIG)
CLASSES = tuple(row.name for row in BUILT_IN_CLASSES)
NUM_CLASSES = 3


def random_data(class_name, config=CONFIG, seed=0):
    """A `CheckpointData` of `class_name` with every variable drawn."""
    rng = np.random.default_rng(seed)
    num_classes = NUM_CLASSES if model_class(class_name).has_class_head else None
    weights = {
        variable.path: rng.standard_normal(variable.shape).astype(np.float32)
        for variable in bert_layout.model_variables(config, class_name, num_classes)
    }
    task = {}
    if num_classes:
        task = {"num_classes": num_classes, "label_names": None, "dropout": 0.1}
    elif "masked_lm_head" in model_class(class_name).head_layer_names:
        task = {"head_activation": "gelu", "head_layer_norm_epsilon": 1e-5}
    tokenizer = TokenizerData(VOCABULARY, {"lowercase": True, "max_length": config.max_positions})
    return CheckpointData(class_name, config, weights, task, tokenizer)


def assert_same_weights(actual, expected, paths):
    assert sorted(paths) and set(paths) <= set(actual) and set(paths) <= set(expected)
    for path in paths:
        assert actual[path].dtype == np.float32, path
        np.testing.assert_array_equal(actual[path], expected[path], err_msg=path)


def test_the_layout_is_what_every_model_class_builds():
    from kbert import models
    from kbert.models.preset_saving import checkpoint_data

    backbone = models.BertBackbone.from_config_object(CONFIG)
    for class_name in CLASSES:
        if class_name == "BertBackbone":
            model = backbone
        elif model_class(class_name).has_class_head:
            model = getattr(models, class_name)(backbone, num_classes=NUM_CLASSES)
        else:
            model = getattr(models, class_name)(backbone)
        built = {path: value.shape for path, value in checkpoint_data(model).weights.items()}
        num_classes = NUM_CLASSES if model_class(class_name).has_class_head else None
        layout = {
            variable.path: variable.shape
            for variable in bert_layout.model_variables(CONFIG, class_name, num_classes)
        }
        assert built == layout, class_name


def test_the_tokenizer_defaults_are_bert_tokenizers():
    parameters = inspect.signature(BertTokenizer.__init__).parameters
    assert TOKENIZER_DEFAULTS == {
        name: parameter.default
        for name, parameter in parameters.items()
        if name not in ("self", "vocabulary")
    }


# --- Round trips ---------------------------------------------------------------------------


@pytest.mark.parametrize("class_name", CLASSES)
def test_kbert_presets_round_trip_exactly(tmp_path, class_name):
    data = random_data(class_name)
    kbert_preset.write_preset(data, tmp_path / "preset")
    read = kbert_preset.read_preset(tmp_path / "preset")
    assert (read.class_name, read.config, read.task) == (class_name, CONFIG, data.task)
    assert read.tokenizer.vocabulary == data.tokenizer.vocabulary
    assert read.tokenizer.all_settings() == data.tokenizer.all_settings()
    assert_same_weights(read.weights, data.weights, list(data.weights))
    kbert_preset.write_preset(read, tmp_path / "again")
    assert_same_weights(
        read_weights(tmp_path / "again" / "model.weights.h5"),
        read_weights(tmp_path / "preset" / "model.weights.h5"),
        list(data.weights),
    )


@pytest.mark.parametrize("class_name", CLASSES)
def test_huggingface_folders_round_trip_exactly(tmp_path, class_name):
    from safetensors.numpy import load_file

    data = random_data(class_name)
    data.task = huggingface_config.task_arguments(
        class_name, CONFIG, {"num_labels": NUM_CLASSES}, "test"
    )
    (tmp_path / "hf").mkdir()
    huggingface.write_huggingface(data, tmp_path / "hf")
    read = huggingface.read_huggingface(tmp_path / "hf")
    assert (read.class_name, read.config, read.task) == (class_name, CONFIG, data.task)
    carried = [
        path
        for path in data.weights
        if not (class_name in huggingface.WITHOUT_POOLER and path.startswith("backbone/pooler/"))
    ]
    assert_same_weights(read.weights, data.weights, carried)
    assert read.tokenizer.vocabulary == tuple(VOCABULARY)
    written = load_file(tmp_path / "hf" / "model.safetensors")
    again = huggingface.huggingface_weights(read)
    assert sorted(again) == sorted(written)
    for name, array in written.items():
        np.testing.assert_array_equal(again[name], array, err_msg=name)


@pytest.mark.parametrize("class_name", ["BertBackbone", "BertMaskedLM", "BertClassifier"])
def test_keras_hub_presets_round_trip_exactly(tmp_path, class_name):
    config = CONFIG.replace(activation="gelu_approximate")
    data = random_data(class_name, config)
    (tmp_path / "hub").mkdir()
    keras_hub_preset.write_keras_hub(data, tmp_path / "hub")
    read = keras_hub_preset.read_keras_hub(tmp_path / "hub")
    assert (read.class_name, read.config, read.task) == (class_name, config, data.task)
    assert_same_weights(read.weights, data.weights, list(data.weights))
    written = read_weights(tmp_path / "hub" / "model.weights.h5")
    again = keras_hub_preset.BACKBONE_WEIGHTS.write(
        bert_layout.backbone_variables(config), read.weights, config
    )
    assert sorted(again) == sorted(written)
    for name, array in written.items():
        np.testing.assert_array_equal(again[name], array, err_msg=name)


def _google_checkpoint(folder, data):
    variables = [v for v in data.variables() if v.path in data.weights]
    tensors = google.WEIGHTS.write(variables, data.weights, data.config)
    return write_google_checkpoint(folder, tensors, optimizer_state=False), tensors


# Google's scripts write no token classifier, and no multiple-choice model (its SWAG
# code was not published).
GOOGLE_CLASSES = [name for name in CLASSES if name not in ("BertTokenClassifier", "BertMultipleChoice")]


@pytest.mark.parametrize("class_name", GOOGLE_CLASSES)
def test_google_checkpoints_round_trip_exactly(tmp_path, class_name):
    pytest.importorskip("tensorflow")
    data = random_data(class_name)
    folder, written = _google_checkpoint(tmp_path / "uncased_L-2_H-32_A-4", data)
    read = google.read_google(folder)
    assert (read.class_name, read.config) == (class_name, CONFIG)
    assert_same_weights(read.weights, data.weights, list(data.weights))
    again = google.WEIGHTS.write(read.variables(), read.weights, CONFIG)
    assert sorted(again) == sorted(written)
    for name, array in written.items():
        np.testing.assert_array_equal(again[name], array, err_msg=name)


# --- A wrong shape in a header -------------------------------------------------------------


def test_a_huggingface_shape_is_refused_before_any_tensor_is_read(tmp_path, monkeypatch):
    from safetensors.numpy import load_file
    from safetensors.numpy import save_file

    import safetensors.numpy

    (tmp_path / "hf").mkdir()
    huggingface.write_huggingface(random_data("BertMaskedLM"), tmp_path / "hf")
    path = tmp_path / "hf" / "model.safetensors"
    tensors = load_file(path)
    name = "bert.encoder.layer.1.attention.self.key.weight"
    tensors[name] = tensors[name][:, :31].copy()
    save_file(tensors, path)
    monkeypatch.setattr(safetensors.numpy, "load_file", lambda *a: pytest.fail("data was read"))
    with pytest.raises(ValueError, match=rf"'{name}' has shape \(32, 31\), expected \(32, 32\)"):
        huggingface.read_huggingface(tmp_path / "hf")


def _with_shape_changed(path, name):
    """Rewrites the HDF5 file `path` with dataset `name` one column short."""
    datasets = read_weights(path)
    datasets[name] = datasets[name][..., :-1].copy()
    path.unlink()
    write_weights(path, datasets, attributes={})
    return datasets[name].shape


def test_a_kbert_preset_shape_is_refused_before_any_dataset_is_read(tmp_path, monkeypatch):
    kbert_preset.write_preset(random_data("BertPretrainer"), tmp_path / "preset")
    name = "backbone/transformer_layer_1/output_dense/kernel"
    assert _with_shape_changed(tmp_path / "preset" / "model.weights.h5", name) == (37, 31)
    monkeypatch.setattr(h5py.Dataset, "__getitem__", lambda *a: pytest.fail("data was read"))
    with pytest.raises(
        ValueError,
        match=r"`transformer_layer_1/output_dense/kernel` has shape \(37, 31\), but the model "
        r"expects \(37, 32\)",
    ):
        kbert_preset.read_preset(tmp_path / "preset")


def test_a_keras_hub_shape_is_refused_before_any_dataset_is_read(tmp_path, monkeypatch):
    config = CONFIG.replace(activation="gelu_approximate")
    (tmp_path / "hub").mkdir()
    keras_hub_preset.write_keras_hub(random_data("BertMaskedLM", config), tmp_path / "hub")
    name = "layers/transformer_encoder_1/_feedforward_intermediate_dense/vars/1"
    _with_shape_changed(tmp_path / "hub" / "model.weights.h5", name)
    monkeypatch.setattr(h5py.Dataset, "__getitem__", lambda *a: pytest.fail("data was read"))
    with pytest.raises(ValueError, match=rf"'{name}' has shape \(36,\), expected \(37,\)"):
        keras_hub_preset.read_keras_hub(tmp_path / "hub")


def test_a_google_shape_is_refused_before_any_variable_is_read(tmp_path, monkeypatch):
    pytest.importorskip("tensorflow")
    data = random_data("BertPretrainer")
    name = "bert/encoder/layer_0/attention/self/value/kernel"
    tensors = google.WEIGHTS.write(data.variables(), data.weights, CONFIG)
    tensors[name] = tensors[name][:, :30].copy()
    folder = write_google_checkpoint(tmp_path / "uncased_bad", tensors, optimizer_state=False)
    monkeypatch.setattr(google._CheckpointReader, "read", lambda *a: pytest.fail("data was read"))
    with pytest.raises(ValueError, match=rf"'{name}' has shape \(32, 30\), expected \(32, 32\)"):
        google.read_google(folder)


# --- No Keras ------------------------------------------------------------------------------


def test_converting_and_exporting_import_no_keras(tmp_path):
    (tmp_path / "hf").mkdir()
    huggingface.write_huggingface(random_data("BertPretrainer"), tmp_path / "hf")
    code = (
        "import sys\n"
        "import kbert.checkpoints, kbert.presets, kbert.architecture\n"
        "assert 'keras' not in sys.modules\n"
        f"preset = kbert.checkpoints.convert({str(tmp_path / 'hf')!r}, "
        f"{str(tmp_path / 'preset')!r})\n"
        f"kbert.checkpoints.export_huggingface(preset, {str(tmp_path / 'again')!r})\n"
        f"kbert.checkpoints.export_keras_hub(preset, {str(tmp_path / 'hub')!r})\n"
        "print('keras imported:', 'keras' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPOSITORY, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("keras imported: False")
    config = json.loads((tmp_path / "preset" / "config.json").read_text())
    assert config["class_name"] == "BertPretrainer"
    assert (tmp_path / "hub" / "task.weights.h5").is_file()
