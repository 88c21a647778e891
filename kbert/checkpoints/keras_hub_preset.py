"""keras-hub (and keras-nlp) BERT presets, both ways, read and written as plain files.

A keras-hub preset folder holds `config.json` (the serialised `BertBackbone`),
`model.weights.h5` (Keras weights), `tokenizer.json` with
`assets/tokenizer/vocabulary.txt`, `metadata.json`, and for a saved task `task.json` +
`task.weights.h5` (+ `preprocessor.json`). The backbone converts, and so do the heads of
a `BertMaskedLM` (-> kbert `BertMaskedLM`) or `BertTextClassifier` (-> `BertClassifier`).

`BACKBONE_WEIGHTS` and `TASK_WEIGHTS` are the tables between the datasets of those
`.weights.h5` files (as Keras names them: `layers/<layer>/vars/<index>`) and kbert's
variables; import and export read them, and neither Keras nor keras-hub is imported:
the weights are HDF5 datasets, the configs JSON. keras-hub computes query, key and value
with `EinsumDense` kernels (H, N, D) and biases (N, D), and the attention output with an
(N, D, H) kernel; kbert fuses q/k/v into one (H, 3H) Dense and keeps the output (H, H).
The reshapes are exact.

Safety: nothing in the folder is deserialised (the JSON is read as plain data by
`keras_hub_config`, `keras_hub_tokenizer`); every `.weights.h5` passes `check_weights_file` (no external links,
external storage, virtual datasets or oversized declarations), and its shapes are
checked against the config, before a value is read.

What keras-hub's BERT cannot express, for exports: its encoder always uses the tanh
approximation of GELU and LayerNorm epsilon 1e-12 (imports get
`activation="gelu_approximate"`; an exact-"gelu" model exports with a warning, other
activations are refused); its masked-LM head uses exact GELU and epsilon 1e-5 whatever
the encoder does (imported heads keep those as `head_activation` and
`head_layer_norm_epsilon`, so they convert exactly both ways); it has no next-sentence,
token-classification or question-answering head (those are left out, with a warning).
"""

import logging
import pathlib

import numpy as np

from kbert.architecture import bert_layout
from kbert.checkpoints.checkpoint_data import CheckpointData
from kbert.checkpoints.keras_hub_config import CONFIG_FILE
from kbert.checkpoints.keras_hub_config import KERAS_HUB_HEAD_LAYER_NORM_EPSILON
from kbert.checkpoints.keras_hub_config import METADATA_FILE
from kbert.checkpoints.keras_hub_config import PREPROCESSOR_CONFIG_FILE
from kbert.checkpoints.keras_hub_config import TASK_CONFIG_FILE
from kbert.checkpoints.keras_hub_config import TASK_WEIGHTS_FILE
from kbert.checkpoints.keras_hub_config import TASKS
from kbert.checkpoints.keras_hub_config import WEIGHTS_FILE
from kbert.checkpoints.keras_hub_config import backbone_arguments
from kbert.checkpoints.keras_hub_config import backbone_config
from kbert.checkpoints.keras_hub_config import check_exportable
from kbert.checkpoints.keras_hub_config import config_from_arguments
from kbert.checkpoints.keras_hub_config import metadata
from kbert.checkpoints.keras_hub_config import preprocessor_config
from kbert.checkpoints.keras_hub_config import task_arguments
from kbert.checkpoints.keras_hub_config import task_config
from kbert.checkpoints.keras_hub_serialization import is_keras_hub_object
from kbert.checkpoints.keras_hub_tokenizer import TOKENIZER_CONFIG_FILE
from kbert.checkpoints.keras_hub_tokenizer import VOCABULARY_FILE
from kbert.checkpoints.keras_hub_tokenizer import tokenizer_config
from kbert.checkpoints.keras_hub_tokenizer import tokenizer_settings
from kbert.checkpoints.stored_tensors import StoredTensors
from kbert.checkpoints.tokenizer_data import TokenizerData
from kbert.checkpoints.tokenizer_files import read_vocabulary
from kbert.checkpoints.tokenizer_files import vocabulary_text
from kbert.checkpoints.weight_map import SPLIT_HEADS
from kbert.checkpoints.weight_map import SPLIT_HEADS_FIRST
from kbert.checkpoints.weight_map import WeightMap
from kbert.checkpoints.weights_file import check_weights_file
from kbert.checkpoints.weights_file import read_weights
from kbert.checkpoints.weights_file import write_weights
from kbert.files.atomic_write import write_json_atomically
from kbert.files.atomic_write import write_text_atomically
from kbert.files.bounded_reader import read_json

logger = logging.getLogger("kbert.checkpoints")


def _dense(kbert, layer):
    return {f"{kbert}/kernel": f"{layer}/vars/0", f"{kbert}/bias": f"{layer}/vars/1"}


def _layer_norm(kbert, layer):
    return {f"{kbert}/gamma": f"{layer}/vars/0", f"{kbert}/beta": f"{layer}/vars/1"}


_BLOCK = bert_layout.BLOCK
# Keras names the i-th TransformerEncoder of the backbone `transformer_encoder_i`, the
# first without a suffix.
_ENCODER = "layers/transformer_encoder{layer}"
_ATTENTION = f"{_ENCODER}/_self_attention_layer"
_QKV = [f"{_ATTENTION}/{part}_dense/vars" for part in ("query", "key", "value")]
# kbert variable template -> dataset of model.weights.h5.
BACKBONE_WEIGHTS = WeightMap(
    {
        "backbone/embeddings/token_embedding/embeddings": "layers/reversible_embedding/vars/0",
        "backbone/embeddings/position_embeddings": "layers/position_embedding/vars/0",
        "backbone/embeddings/segment_embedding/embeddings": "layers/embedding/vars/0",
        **_layer_norm("backbone/embeddings/layer_norm", "layers/layer_normalization"),
        f"{_BLOCK}/self_attention/query_key_value/kernel": (
            SPLIT_HEADS,
            *(f"{name}/0" for name in _QKV),
        ),
        f"{_BLOCK}/self_attention/query_key_value/bias": (
            SPLIT_HEADS,
            *(f"{name}/1" for name in _QKV),
        ),
        f"{_BLOCK}/self_attention/output_projection/kernel": (
            SPLIT_HEADS_FIRST,
            f"{_ATTENTION}/output_dense/vars/0",
        ),
        f"{_BLOCK}/self_attention/output_projection/bias": f"{_ATTENTION}/output_dense/vars/1",
        **_layer_norm(f"{_BLOCK}/attention_layer_norm", f"{_ENCODER}/_self_attention_layer_norm"),
        **_dense(f"{_BLOCK}/intermediate_dense", f"{_ENCODER}/_feedforward_intermediate_dense"),
        **_dense(f"{_BLOCK}/output_dense", f"{_ENCODER}/_feedforward_output_dense"),
        **_layer_norm(f"{_BLOCK}/output_layer_norm", f"{_ENCODER}/_feedforward_layer_norm"),
        **_dense("backbone/pooler/dense", "layers/dense"),
    },
    layer_key=lambda index: f"_{index}" if index else "",
)
_HEAD = "layers/masked_lm_head"
# kbert variable template -> dataset of task.weights.h5 (BertMaskedLM, BertTextClassifier).
TASK_WEIGHTS = WeightMap(
    {
        **_dense("head/masked_lm_head/transform_dense", f"{_HEAD}/_intermediate_dense"),
        **_layer_norm("head/masked_lm_head/layer_norm", f"{_HEAD}/_intermediate_layer_norm"),
        "head/masked_lm_head/output_bias": f"{_HEAD}/vars/0",
        **_dense("head/classifier_head", "layers/dense"),
    }
)
# What keras-hub saves of a task's untrained optimizer (iterations, learning rate): the
# `keras.optimizers.Adam(5e-5)` its tasks compile with. Without it keras-hub warns that it
# skips the optimizer's variables when it loads the task.
_UNTRAINED_OPTIMIZER = {
    "optimizer/vars/0": np.array(0, np.int64),
    "optimizer/vars/1": np.array(5e-5, np.float32),
}
def is_keras_hub_folder(folder):
    """Whether `folder` is a keras-hub/keras-nlp preset: `config.json` + `model.weights.h5`."""
    folder = pathlib.Path(folder)
    if not ((folder / CONFIG_FILE).is_file() and (folder / WEIGHTS_FILE).is_file()):
        return False
    try:
        config = read_json(folder / CONFIG_FILE, "config", folder)
    except ValueError:
        return False
    return is_keras_hub_object(config)


# --- Import --------------------------------------------------------------------------------


def _declared_values(declared):
    return sum(int(np.prod(shape, dtype=np.int64)) for shape, _ in declared.values())


def _weights_file(folder, file_name, declared):
    """The datasets of one `.weights.h5` (already checked) as `StoredTensors`."""
    path = folder / file_name
    arrays = {}

    def read(name):
        if not arrays:
            arrays.update(read_weights(path, folder=folder))
        return np.asarray(arrays[name], np.float32)

    return StoredTensors(
        path, {name: shape for name, (shape, _) in declared.items()}, read, noun="dataset"
    )


def read_keras_hub(folder):
    """The `CheckpointData` of a keras-hub BERT preset folder.

    Args:
        folder: a folder written by keras-hub's `save_to_preset` (or downloaded from
            Kaggle) for `BertBackbone`, `BertMaskedLM` or `BertTextClassifier`.

    Returns:
        A `BertMaskedLM` or `BertClassifier` when the folder holds that task (`task.json`
        + `task.weights.h5`), else a `BertBackbone`; the tokenizer comes from
        `tokenizer.json` + `assets/tokenizer/vocabulary.txt` (None without them).

    Raises:
        ValueError: for another model class, a config with non-plain values, a weights
            file with links or oversized data, or weights that do not fit.
    """
    folder = pathlib.Path(folder).expanduser()
    config_path = folder / CONFIG_FILE
    arguments = backbone_arguments(read_json(config_path, "config", folder), config_path)
    config = config_from_arguments(arguments, config_path)
    declared = check_weights_file(folder / WEIGHTS_FILE, folder)
    config.check_weights_hold(_declared_values(declared), config_path)
    class_name, task = task_arguments(folder) or ("BertBackbone", {})
    backbone, heads = (
        bert_layout.backbone_variables(config),
        bert_layout.head_variables(config, class_name, task.get("num_classes")),
    )
    weights = BACKBONE_WEIGHTS.read(
        backbone, _weights_file(folder, WEIGHTS_FILE, declared), config, against="its config.json"
    )
    if heads:
        task_declared = check_weights_file(folder / TASK_WEIGHTS_FILE, folder)
        num_classes = task.get("num_classes")
        if num_classes is not None and num_classes * config.hidden_size > 2 * (
            _declared_values(declared) + _declared_values(task_declared)
        ):
            raise ValueError(
                f"{folder / TASK_CONFIG_FILE}: num_classes={num_classes} needs a "
                f"{config.hidden_size} x {num_classes} head, more than the weights files declare."
            )
        tensors = _weights_file(folder, TASK_WEIGHTS_FILE, task_declared)
        weights.update(TASK_WEIGHTS.read(heads, tensors, config, against="its task.json"))
    data = CheckpointData(
        class_name, config, weights, task, tokenizer=read_keras_hub_tokenizer(folder, config)
    )
    return data.logged_as_loaded(f"keras-hub preset {folder}")


def read_keras_hub_tokenizer(folder, config):
    """The `TokenizerData` of a keras-hub preset's `tokenizer.json` and vocabulary, or None."""
    folder = pathlib.Path(folder)
    vocabulary = folder / VOCABULARY_FILE
    if not vocabulary.is_file():
        logger.warning(
            "%s has no %s; the model is imported without a tokenizer.", folder, VOCABULARY_FILE
        )
        return None
    settings = tokenizer_settings(folder / TOKENIZER_CONFIG_FILE, folder)
    settings["max_length"] = config.max_positions
    return TokenizerData(read_vocabulary(vocabulary, folder), settings)


# --- Export --------------------------------------------------------------------------------


def _exported_task(data):
    """The kbert class whose head keras-hub gets (None: the backbone alone)."""
    if data.class_name == "BertPretrainer":
        logger.warning("keras-hub has no next-sentence head; it is left out of the export.")
        return "BertMaskedLM"
    if data.class_name in TASKS:
        return data.class_name
    if data.class_name != "BertBackbone":
        logger.warning(
            "keras-hub has no BERT task for %s; only the backbone is exported.", data.class_name
        )
    return None


def write_keras_hub(data, folder):
    """Writes `data` (a `CheckpointData`) as a keras-hub preset into the (staging) `folder`.

    Returns:
        The keras-hub class the preset holds ("BertBackbone", "BertMaskedLM" or
        "BertTextClassifier").
    """
    folder = pathlib.Path(folder)
    check_exportable(data)
    task = _exported_task(data)
    if task == "BertMaskedLM" and (
        data.task.get("head_activation", data.config.activation),
        data.task.get("head_layer_norm_epsilon", data.config.layer_norm_epsilon),
    ) != ("gelu", KERAS_HUB_HEAD_LAYER_NORM_EPSILON):
        logger.warning(
            "keras-hub's masked-LM head uses exact GELU and LayerNorm epsilon %g; this "
            "model's head uses %s and %g, so the exported masked-LM logits differ slightly.",
            KERAS_HUB_HEAD_LAYER_NORM_EPSILON,
            data.task.get("head_activation", data.config.activation),
            data.task.get("head_layer_norm_epsilon", data.config.layer_norm_epsilon),
        )
    backbone = bert_layout.backbone_variables(data.config)
    heads = bert_layout.head_variables(data.config, task, data.num_classes) if task else []
    data.require_weights(backbone + heads)
    write_json_atomically(folder / CONFIG_FILE, backbone_config(data.config), sort_keys=False)
    write_weights(
        folder / WEIGHTS_FILE,
        BACKBONE_WEIGHTS.write(backbone, data.weights, data.config),
        attributes={},
    )
    preprocessor = None
    if data.tokenizer is not None:
        write_json_atomically(
            folder / TOKENIZER_CONFIG_FILE, tokenizer_config(data.tokenizer), sort_keys=False
        )
        (folder / VOCABULARY_FILE).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(folder / VOCABULARY_FILE, vocabulary_text(data.tokenizer.vocabulary))
        if task is not None:
            preprocessor = preprocessor_config(task, data)
            write_json_atomically(folder / PREPROCESSOR_CONFIG_FILE, preprocessor, sort_keys=False)
    if task is not None:
        write_json_atomically(
            folder / TASK_CONFIG_FILE, task_config(task, data, preprocessor), sort_keys=False
        )
        write_weights(
            folder / TASK_WEIGHTS_FILE,
            {**TASK_WEIGHTS.write(heads, data.weights, data.config), **_UNTRAINED_OPTIMIZER},
            attributes={},
        )
    parameter_count = sum(int(np.prod(variable.shape)) for variable in backbone)
    write_json_atomically(folder / METADATA_FILE, metadata(parameter_count), sort_keys=False)
    return TASKS[task][0] if task else "BertBackbone"
