"""keras-hub's BERT configs, both ways: the JSON of a keras-hub preset as plain data.

`config.json` (the serialised `BertBackbone`), `task.json` (`BertMaskedLM`,
`BertTextClassifier`), `preprocessor.json`, `tokenizer.json` and `metadata.json` hold
Keras-serialised objects. Reading them never deserialises anything: only the class names
and plain numbers, strings and booleans of the arguments kbert knows are read, so no
Lambda or other class can be smuggled in. Writing produces what keras-hub's own
`save_to_preset` writes for BERT, so that `keras_hub.models.*.from_preset` loads it.

Each file is read and written side by side, so that the two directions of one format
stay together; the tokenizer's file (`keras_hub_tokenizer`) and the serialised-object
form they share (`keras_hub_serialization`) have modules of their own.
"""

import datetime
import importlib.metadata
import logging
import os

from kbert.architecture.bert_config import BertConfig
from kbert.checkpoints.keras_hub_serialization import dtype_policy
from kbert.checkpoints.keras_hub_serialization import is_keras_hub_class
from kbert.checkpoints.keras_hub_serialization import serialized
from kbert.checkpoints.keras_hub_tokenizer import check_tokenizer_exportable
from kbert.checkpoints.keras_hub_tokenizer import tokenizer_config
from kbert.files.bounded_reader import read_json
from kbert.model_table import BUILT_IN_CLASSES

logger = logging.getLogger("kbert.checkpoints")

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.weights.h5"
TASK_CONFIG_FILE = "task.json"
TASK_WEIGHTS_FILE = "task.weights.h5"
PREPROCESSOR_CONFIG_FILE = "preprocessor.json"
METADATA_FILE = "metadata.json"

# keras-hub's BertBackbone constructor arguments and their JSON types.
BACKBONE_ARGUMENTS = {
    "vocabulary_size": int,
    "num_layers": int,
    "num_heads": int,
    "hidden_dim": int,
    "intermediate_dim": int,
    "dropout": (int, float),
    "max_sequence_length": int,
    "num_segments": int,
    "name": str,
    "trainable": bool,
}
_REQUIRED_ARGUMENTS = (
    "vocabulary_size",
    "num_layers",
    "num_heads",
    "hidden_dim",
    "intermediate_dim",
)
# keras-hub's encoder LayerNorm epsilon, and that of the MaskedLMHead BertMaskedLM builds
# (with the exact "gelu" activation).
KERAS_HUB_LAYER_NORM_EPSILON = 1e-12
KERAS_HUB_HEAD_LAYER_NORM_EPSILON = 1e-5
# kbert class -> (keras-hub task, its module, its preprocessor) for the tasks keras-hub
# has (the model table's `keras_hub_task` of kbert's classes).
TASKS = {row.name: row.keras_hub_task for row in BUILT_IN_CLASSES if row.keras_hub_task}


# --- Reading --------------------------------------------------------------------------------


def backbone_arguments(config, source=CONFIG_FILE):
    """keras-hub `BertBackbone` arguments from its serialised config, checked to be plain data.

    Raises:
        ValueError: when the config names another class, has arguments BertBackbone does
            not take, or values that are not plain numbers/strings (a serialised object
            could name code to run).
    """
    if not isinstance(config, dict):
        raise ValueError(f"{source} must hold a JSON object. Received: {type(config).__name__}")
    if not is_keras_hub_class(config, "BertBackbone"):
        raise ValueError(
            f"{source} describes {config.get('registered_name') or config.get('class_name')!r}; "
            "only keras-hub's BertBackbone (registered_name 'keras_hub>BertBackbone') "
            "converts to kbert."
        )
    arguments = config.get("config")
    if not isinstance(arguments, dict):
        raise ValueError(f"{source}: `config` must be an object of BertBackbone arguments.")
    checked = {}
    for key, value in arguments.items():
        if key == "dtype":
            _check_dtype(value, source)
            continue
        expected = BACKBONE_ARGUMENTS.get(key)
        if expected is None:
            raise ValueError(
                f"{source}: unknown BertBackbone argument {key!r}. Known: "
                f"{sorted([*BACKBONE_ARGUMENTS, 'dtype'])}"
            )
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ValueError(
                f"{source}: `{key}` must be a plain {getattr(expected, '__name__', 'number')}. "
                f"Received: {key}={value!r}"
            )
        checked[key] = value
    missing = [key for key in _REQUIRED_ARGUMENTS if key not in checked]
    if missing:
        raise ValueError(f"{source}: BertBackbone arguments {missing} are missing.")
    return checked


def _check_dtype(value, source):
    if value is None or isinstance(value, str):
        return
    policy = value.get("config") if isinstance(value, dict) else None
    if (
        isinstance(value, dict)
        and value.get("module") == "keras"
        and value.get("class_name") == "DTypePolicy"
        and isinstance(policy, dict)
        and set(policy) == {"name"}
        and isinstance(policy["name"], str)
    ):
        return
    raise ValueError(
        f"{source}: `dtype` must be a dtype name or a plain keras DTypePolicy "
        f"(quantized or custom policies are not supported). Received: dtype={value!r}"
    )


def config_from_arguments(arguments, source=CONFIG_FILE):
    """The kbert `BertConfig` that checked keras-hub arguments describe (its limits apply)."""
    dropout = float(arguments.get("dropout", 0.1))
    try:
        return BertConfig(
            vocabulary_size=arguments["vocabulary_size"],
            hidden_size=arguments["hidden_dim"],
            num_layers=arguments["num_layers"],
            num_heads=arguments["num_heads"],
            intermediate_size=arguments["intermediate_dim"],
            max_positions=arguments.get("max_sequence_length", 512),
            type_vocabulary_size=arguments.get("num_segments", 2),
            hidden_dropout=dropout,
            attention_dropout=dropout,
            layer_norm_epsilon=KERAS_HUB_LAYER_NORM_EPSILON,
            activation="gelu_approximate",
        )
    except ValueError as error:
        raise ValueError(
            f"{source}: {error} (keras-hub argument names: hidden_dim, intermediate_dim, "
            "max_sequence_length, num_segments)"
        ) from None


def task_arguments(folder):
    """`(kbert class, kbert task arguments)` for a convertible task.json, else None.

    Only the class name and plain numbers are read from task.json; it is never
    deserialised (its preprocessor entry would build TensorFlow Text layers, and an
    unchecked entry could name any class).
    """
    task_path = folder / TASK_CONFIG_FILE
    if not os.path.lexists(task_path):
        return None
    task_config = read_json(task_path, "config", folder)
    if is_keras_hub_class(task_config, "BertMaskedLM"):
        task = (
            "BertMaskedLM",
            {
                "head_activation": "gelu",
                "head_layer_norm_epsilon": KERAS_HUB_HEAD_LAYER_NORM_EPSILON,
            },
        )
    elif is_keras_hub_class(task_config, "BertTextClassifier"):
        values = task_config.get("config") or {}
        num_classes, dropout = values.get("num_classes"), values.get("dropout", 0.1)
        activation = values.get("activation")
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
            raise ValueError(
                f"{task_path}: `num_classes` must be a positive integer. Received: {num_classes!r}"
            )
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)):
            raise ValueError(f"{task_path}: `dropout` must be a number. Received: {dropout!r}")
        if activation not in (None, "linear"):
            raise ValueError(
                f"{task_path}: the classifier applies activation={activation!r} to its "
                "logits; kbert's BertClassifier outputs logits, so only activation=None "
                "converts exactly."
            )
        task = (
            "BertClassifier",
            {"num_classes": num_classes, "label_names": None, "dropout": float(dropout)},
        )
    else:
        logger.warning(
            "%s describes %r; only the backbone is converted.",
            task_path,
            task_config.get("registered_name") if isinstance(task_config, dict) else None,
        )
        return None
    if not (folder / TASK_WEIGHTS_FILE).is_file():
        raise ValueError(f"{task_path} describes a {task[0]} but {TASK_WEIGHTS_FILE} is missing.")
    return task


# --- Writing --------------------------------------------------------------------------------


def backbone_config(config):
    """keras-hub's `config.json` for a `BertBackbone` with kbert's `config`."""
    return serialized(
        "bert_backbone",
        "BertBackbone",
        {
            "name": "bert_backbone",
            "trainable": True,
            "dtype": dtype_policy("float32"),
            "vocabulary_size": config.vocabulary_size,
            "num_layers": config.num_layers,
            "num_heads": config.num_heads,
            "hidden_dim": config.hidden_size,
            "intermediate_dim": config.intermediate_size,
            "dropout": config.hidden_dropout,
            "max_sequence_length": config.max_positions,
            "num_segments": config.type_vocabulary_size,
        },
    )


def preprocessor_config(kbert_class, data):
    """keras-hub's `preprocessor.json` for the task of `kbert_class` and its tokenizer."""
    _, module, class_name = TASKS[kbert_class]
    values = {
        "name": f"{module}_preprocessor",
        "trainable": True,
        "dtype": dtype_policy("float32"),
        "tokenizer": tokenizer_config(data.tokenizer),
        "config_file": PREPROCESSOR_CONFIG_FILE,
        "sequence_length": min(data.tokenizer.setting("max_length"), data.config.max_positions),
        "truncate": "round_robin",
    }
    if kbert_class == "BertMaskedLM":
        # keras-hub's BertMaskedLMPreprocessor defaults (BERT's 15% with 80/10/10).
        values.update(
            mask_selection_rate=0.15,
            mask_selection_length=96,
            mask_token_rate=0.8,
            random_token_rate=0.1,
        )
    return serialized(f"{module}_preprocessor", class_name, values)


def task_config(kbert_class, data, preprocessor):
    """keras-hub's `task.json` for the task of `kbert_class` (`preprocessor` embedded)."""
    hub_class, module, _ = TASKS[kbert_class]
    values = {
        "backbone": backbone_config(data.config),
        "preprocessor": preprocessor,
        "name": module,
    }
    if kbert_class == "BertClassifier":
        dropout = data.task.get("dropout")
        values.update(
            num_classes=data.num_classes,
            activation="linear",
            dropout=data.config.hidden_dropout if dropout is None else dropout,
        )
    return serialized(module, hub_class, values)


def _version(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def metadata(parameter_count):
    """keras-hub's `metadata.json` for a backbone of `parameter_count` weights."""
    return {
        "keras_version": _version("keras"),
        "keras_hub_version": _version("keras-hub"),
        "parameter_count": parameter_count,
        "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
        "tasks": ["MaskedLM", "TextClassifier", "TextEmbedder"],
    }


def check_exportable(data):
    """Refuses what keras-hub's BERT cannot hold; warns about what it holds approximately."""
    config = data.config
    if config.activation not in ("gelu", "gelu_approximate"):
        raise ValueError(
            "keras-hub's BertBackbone always uses GELU; a model with "
            f"activation={config.activation!r} cannot be exported to it."
        )
    if config.activation == "gelu":
        logger.warning(
            "The model uses the exact GELU; keras-hub's BertBackbone computes the tanh "
            "approximation, so the exported model's outputs differ slightly (typically "
            "1e-4 to 1e-3)."
        )
    if config.layer_norm_epsilon != KERAS_HUB_LAYER_NORM_EPSILON:
        logger.warning(
            "The model's LayerNorm epsilon is %g; keras-hub's BertBackbone uses %g.",
            config.layer_norm_epsilon,
            KERAS_HUB_LAYER_NORM_EPSILON,
        )
    if config.attention_dropout != config.hidden_dropout:
        logger.info(
            "keras-hub has one dropout rate; the export uses hidden_dropout=%g.",
            config.hidden_dropout,
        )
    if data.tokenizer is not None:
        check_tokenizer_exportable(data.tokenizer)
