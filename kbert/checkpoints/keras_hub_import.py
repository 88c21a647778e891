"""Imports keras-hub (and keras-nlp) BERT presets: a local folder as keras-hub writes it.

A keras-hub preset folder holds `config.json` (the serialised `BertBackbone`),
`model.weights.h5` (Keras weights), `tokenizer.json` with
`assets/tokenizer/vocabulary.txt`, `metadata.json`, and for a saved task `task.json` +
`task.weights.h5` (+ `preprocessor.json`). The backbone converts, and so do the heads of
a `BertMaskedLM` (-> kbert `BertMaskedLM`) or `BertTextClassifier` (-> `BertClassifier`).

Safety: nothing in the folder is deserialised blindly. `config.json` must name
keras-hub's `BertBackbone` and hold plain numbers and strings only (so no Lambda or other
class can be smuggled in); `task.json` is only read for the class it names, never
deserialised; every `.weights.h5` passes `check_weights_file` (no external links,
external storage, virtual datasets or oversized declarations) before Keras reads it.
JSON files are read through `kbert.files.bounded_reader`. The sizes in config.json must
be within `BertConfig`'s limits and fit the numbers the weights files declare before
keras-hub builds anything (a `hidden_dim` of 10^9 would abort inside XLA).
The backbone is then loaded with keras-hub's own `BertBackbone.from_preset`, which
(Keras' safe mode aside) finds nothing in the checked config but BertBackbone itself.

Layout differences: keras-hub computes query, key and value with `EinsumDense` kernels
(H, N, D) and biases (N, D), and the attention output with an (N, D, H) kernel; kbert
fuses q/k/v into one (H, 3H) Dense and keeps the output as (H, H). The reshapes are
exact. keras-hub's encoder uses the tanh approximation of GELU, so the kbert model gets
`activation="gelu_approximate"`. Its masked-LM head, however, uses the exact GELU and a
LayerNorm epsilon of 1e-5: the kbert `BertMaskedLM` gets those as its own
`head_activation` and `head_layer_norm_epsilon`, so the head converts exactly too.

keras-hub is imported only when a preset is loaded (it takes seconds and pulls in
TensorFlow Text).
"""

import logging
import os
import pathlib

import numpy as np

from kbert.files.bounded_reader import read_json

logger = logging.getLogger("kbert.checkpoints")

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.weights.h5"
TASK_CONFIG_FILE = "task.json"
TASK_WEIGHTS_FILE = "task.weights.h5"
TOKENIZER_CONFIG_FILE = "tokenizer.json"
VOCABULARY_FILE = "assets/tokenizer/vocabulary.txt"

_PACKAGES = ("keras_hub", "keras_nlp")
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
# The LayerNorm epsilon of keras-hub's MaskedLMHead as BertMaskedLM builds it (with the
# exact "gelu" activation).
KERAS_HUB_HEAD_LAYER_NORM_EPSILON = 1e-5


def _is_keras_hub_class(config, class_name):
    return isinstance(config, dict) and config.get("registered_name") in {
        f"{package}>{class_name}" for package in _PACKAGES
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
    name = config.get("registered_name") if isinstance(config, dict) else None
    return isinstance(name, str) and name.split(">")[0] in _PACKAGES


def backbone_arguments(config, source=CONFIG_FILE):
    """keras-hub `BertBackbone` arguments from its serialised config, checked to be plain data.

    Raises:
        ValueError: when the config names another class, has arguments BertBackbone does
            not take, or values that are not plain numbers/strings (a serialised object
            could name code to run).
    """
    if not isinstance(config, dict):
        raise ValueError(f"{source} must hold a JSON object. Received: {type(config).__name__}")
    if not _is_keras_hub_class(config, "BertBackbone"):
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


def load_keras_hub(folder):
    """Builds the kbert model equivalent to a keras-hub BERT preset folder.

    Args:
        folder: a folder written by keras-hub's `save_to_preset` (or downloaded from
            Kaggle) for `BertBackbone`, `BertMaskedLM` or `BertTextClassifier`.

    Returns:
        `(model, tokenizer)`: a `BertMaskedLM` or `BertClassifier` when the folder holds
        that task (`task.json` + `task.weights.h5`), else a `BertBackbone`; the tokenizer comes
        from `tokenizer.json` + `assets/tokenizer/vocabulary.txt` (None without them).

    Raises:
        ValueError: for another model class, a config with non-plain values, a weights
            file with links or oversized data, or weights that do not fit.

    Example:

    >>> model, tokenizer = load_keras_hub("downloads/bert_base_en_uncased")
    """
    from kbert.presets.weights_file import check_weights_file

    folder = pathlib.Path(folder).expanduser()
    _check_files_keras_reads(folder)
    config_path = folder / CONFIG_FILE
    arguments = backbone_arguments(read_json(config_path, "config", folder), config_path)
    declared = _declared_values(check_weights_file(folder / WEIGHTS_FILE, folder))
    _config_from_arguments(arguments, config_path).check_weights_hold(declared, config_path)
    task = _task_arguments(folder)
    if task is not None:
        task_values = _declared_values(check_weights_file(folder / TASK_WEIGHTS_FILE, folder))
        _check_head_fits(task, arguments, declared + task_values, folder / TASK_CONFIG_FILE)

    import keras_hub

    hub_backbone = keras_hub.models.BertBackbone.from_preset(str(folder))
    _check_loaded_arguments(hub_backbone, arguments, folder)
    hub_model = hub_backbone
    if task is not None:
        task_class = getattr(keras_hub.models, task["class_name"])
        hub_model = task_class(backbone=hub_backbone, preprocessor=None, **task["arguments"])
        hub_model.load_task_weights(str(folder / TASK_WEIGHTS_FILE))

    from kbert import models

    config = kbert_config(hub_backbone)
    backbone = models.BertBackbone.from_config_object(config)
    if task is None:
        model = backbone
    elif task["class_name"] == "BertMaskedLM":
        model = models.BertMaskedLM(
            backbone,
            head_activation="gelu",
            head_layer_norm_epsilon=KERAS_HUB_HEAD_LAYER_NORM_EPSILON,
        )
    else:
        model = models.BertClassifier(
            backbone, num_classes=task["arguments"]["num_classes"], dropout=task["dropout"]
        )
    links = weight_links(model, hub_model)
    for link in links:
        link.check()
    for link in links:
        link.to_kbert()

    tokenizer = load_keras_hub_tokenizer(folder, config)
    if model is not backbone:
        model.tokenizer = tokenizer
    logger.info(
        "Loaded keras-hub preset %s as %s (%d parameters).",
        folder,
        type(model).__name__,
        model.count_params(),
    )
    return model, tokenizer


# JSON files keras-hub's own loader reads besides the ones kbert parses.
_OTHER_JSON_FILES = ("metadata.json", "preprocessor.json")


def _check_files_keras_reads(folder):
    """Puts every file keras-hub will open through the bounded reader's checks first."""
    for name in _OTHER_JSON_FILES:
        if os.path.lexists(folder / name):
            read_json(folder / name, "config", folder)


def _declared_values(shapes):
    return sum(int(np.prod(shape, dtype=np.int64)) for shape, _ in shapes.values())


def _config_from_arguments(arguments, source):
    """The kbert `BertConfig` that checked keras-hub arguments describe (its limits apply)."""
    from kbert.architecture.bert_config import BertConfig

    try:
        return BertConfig(
            vocabulary_size=arguments["vocabulary_size"],
            hidden_size=arguments["hidden_dim"],
            num_layers=arguments["num_layers"],
            num_heads=arguments["num_heads"],
            intermediate_size=arguments["intermediate_dim"],
            max_positions=arguments.get("max_sequence_length", 512),
            type_vocabulary_size=arguments.get("num_segments", 2),
            hidden_dropout=arguments.get("dropout", 0.1),
            attention_dropout=arguments.get("dropout", 0.1),
            activation="gelu_approximate",
        )
    except ValueError as error:
        raise ValueError(
            f"{source}: {error} (keras-hub argument names: hidden_dim, intermediate_dim, "
            "max_sequence_length, num_segments)"
        ) from None


def _check_head_fits(task, arguments, declared, source):
    """Refuses a classifier with more classes than the task weights hold, before building."""
    num_classes = task["arguments"].get("num_classes")
    if num_classes is not None and num_classes * arguments["hidden_dim"] > 2 * declared:
        raise ValueError(
            f"{source}: num_classes={num_classes} needs a {arguments['hidden_dim']} x "
            f"{num_classes} head, more than the weights files declare ({declared} values)."
        )


def _task_arguments(folder):
    """`{"class_name", "arguments", "dropout"}` for a convertible task.json, else None.

    Only the class name and plain numbers are read from task.json; it is never
    deserialised (its preprocessor entry would build TensorFlow Text layers, and an
    unchecked entry could name any class).
    """
    task_path = folder / TASK_CONFIG_FILE
    if not os.path.lexists(task_path):
        return None
    task_config = read_json(task_path, "config", folder)
    if _is_keras_hub_class(task_config, "BertMaskedLM"):
        task = {"class_name": "BertMaskedLM", "arguments": {}, "dropout": None}
    elif _is_keras_hub_class(task_config, "BertTextClassifier"):
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
        task = {
            "class_name": "BertTextClassifier",
            "arguments": {"num_classes": num_classes, "dropout": dropout},
            "dropout": float(dropout),
        }
    else:
        logger.warning(
            "%s describes %r; only the backbone is converted.",
            task_path,
            task_config.get("registered_name") if isinstance(task_config, dict) else None,
        )
        return None
    if not (folder / TASK_WEIGHTS_FILE).is_file():
        raise ValueError(
            f"{task_path} describes a {task['class_name']} but {TASK_WEIGHTS_FILE} is missing."
        )
    return task


def _check_loaded_arguments(hub_backbone, arguments, folder):
    # from_preset reads config.json again; make sure it built what was checked.
    for key, value in arguments.items():
        if key in ("name", "trainable"):
            continue
        if getattr(hub_backbone, key) != value:
            raise ValueError(f"{folder}: {CONFIG_FILE} changed while it was being read.")


def kbert_config(hub_backbone):
    """The kbert `BertConfig` of a keras-hub `BertBackbone` (tanh-approximated GELU)."""
    from kbert.architecture.bert_config import BertConfig

    return BertConfig(
        vocabulary_size=hub_backbone.vocabulary_size,
        hidden_size=hub_backbone.hidden_dim,
        num_layers=hub_backbone.num_layers,
        num_heads=hub_backbone.num_heads,
        intermediate_size=hub_backbone.intermediate_dim,
        max_positions=hub_backbone.max_sequence_length,
        type_vocabulary_size=hub_backbone.num_segments,
        hidden_dropout=float(hub_backbone.dropout),
        attention_dropout=float(hub_backbone.dropout),
        layer_norm_epsilon=float(hub_backbone.embeddings_layer_norm.epsilon),
        activation="gelu_approximate",
    )


# --- Weight links ----------------------------------------------------------------------------


class WeightLink:
    """One kbert variable and the keras-hub variables holding the same numbers.

    `to_kbert` and `to_keras_hub` copy in either direction; `check` compares shapes
    first, so a mismatch raises before anything is assigned.
    """

    def __init__(self, kbert_variable, hub_variables, join, split):
        self.kbert_variable = kbert_variable
        self.hub_variables = tuple(hub_variables)
        self._join = join  # hub arrays -> kbert array
        self._split = split  # kbert array -> hub arrays

    def check(self):
        hub_shapes = [tuple(variable.shape) for variable in self.hub_variables]
        expected = [
            tuple(part.shape)
            for part in self._split(np.zeros(self.kbert_variable.shape, "float32"))
        ]
        if hub_shapes != expected:
            raise ValueError(
                f"keras-hub variable(s) {[v.path for v in self.hub_variables]} have shapes "
                f"{hub_shapes}; kbert variable {self.kbert_variable.path!r} "
                f"{tuple(self.kbert_variable.shape)} needs {expected}."
            )

    def to_kbert(self):
        import keras

        arrays = [keras.ops.convert_to_numpy(variable) for variable in self.hub_variables]
        self.kbert_variable.assign(self._join(arrays))

    def to_keras_hub(self):
        import keras

        value = keras.ops.convert_to_numpy(self.kbert_variable)
        for variable, part in zip(self.hub_variables, self._split(value), strict=True):
            variable.assign(part)


def identical_link(kbert_variable, hub_variable):
    return WeightLink(
        kbert_variable, [hub_variable], lambda arrays: arrays[0], lambda value: [value]
    )


def _fused_projection(kbert_variable, hub_variables, head_shape):
    """q, k, v EinsumDense weights (..., N, D) <-> one fused kbert weight (..., 3H)."""

    def join(arrays):
        return np.concatenate([array.reshape(*array.shape[:-2], -1) for array in arrays], axis=-1)

    def split(value):
        return [part.reshape(*part.shape[:-1], *head_shape) for part in np.split(value, 3, axis=-1)]

    return WeightLink(kbert_variable, hub_variables, join, split)


def _attention_output(kbert_variable, hub_variable, num_heads):
    """keras-hub's (N, D, H) output kernel <-> kbert's (H, H)."""
    return WeightLink(
        kbert_variable,
        [hub_variable],
        lambda arrays: arrays[0].reshape(-1, arrays[0].shape[-1]),
        lambda value: [value.reshape(num_heads, -1, value.shape[-1])],
    )


def _dense(kbert_layer, hub, prefix):
    return [
        identical_link(kbert_layer.kernel, hub[f"{prefix}/kernel"]),
        identical_link(kbert_layer.bias, hub[f"{prefix}/bias"]),
    ]


def _layer_norm(kbert_layer, hub, prefix):
    return [
        identical_link(kbert_layer.gamma, hub[f"{prefix}/gamma"]),
        identical_link(kbert_layer.beta, hub[f"{prefix}/beta"]),
    ]


def weight_links(model, hub_model):
    """`WeightLink`s for every weight a kbert model shares with a keras-hub model.

    Args:
        model: a kbert `BertBackbone`, `BertMaskedLM`/`BertPretrainer` (masked-LM head
            linked) or `BertClassifier` (classifier head linked).
        hub_model: keras-hub's `BertBackbone`, `BertMaskedLM` or `BertTextClassifier` of
            the same size.
    """
    hub = _VariablesByPath(hub_model)
    backbone = getattr(model, "backbone", model)
    config = backbone.bert_config
    head_shape = (config.num_heads, config.head_size)
    embeddings = backbone.embeddings
    links = [
        identical_link(embeddings.token_embedding.embeddings, hub["token_embedding/embeddings"]),
        identical_link(embeddings.position_embeddings, hub["position_embedding/embeddings"]),
        identical_link(
            embeddings.segment_embedding.embeddings, hub["segment_embedding/embeddings"]
        ),
        *_layer_norm(embeddings.layer_norm, hub, "embeddings_layer_norm"),
    ]
    for index, block in enumerate(backbone.encoder_blocks):
        prefix = f"transformer_layer_{index}"
        attention = block.self_attention
        projections = [
            f"{prefix}/self_attention_layer/{part}" for part in ("query", "key", "value")
        ]
        links += [
            _fused_projection(
                attention.query_key_value.kernel,
                [hub[f"{name}/kernel"] for name in projections],
                head_shape,
            ),
            _fused_projection(
                attention.query_key_value.bias,
                [hub[f"{name}/bias"] for name in projections],
                head_shape,
            ),
            _attention_output(
                attention.output_projection.kernel,
                hub[f"{prefix}/self_attention_layer/attention_output/kernel"],
                config.num_heads,
            ),
            identical_link(
                attention.output_projection.bias,
                hub[f"{prefix}/self_attention_layer/attention_output/bias"],
            ),
            *_layer_norm(block.attention_layer_norm, hub, f"{prefix}/self_attention_layer_norm"),
            *_dense(block.intermediate_dense, hub, f"{prefix}/feedforward_intermediate_dense"),
            *_dense(block.output_dense, hub, f"{prefix}/feedforward_output_dense"),
            *_layer_norm(block.output_layer_norm, hub, f"{prefix}/feedforward_layer_norm"),
        ]
    links += _dense(backbone.pooler.dense, hub, "pooled_dense")
    if hub.has("logits/kernel"):
        head = model.get_layer("classifier_head")
        links += _dense(head, hub, "logits")
    if hub.has("mlm_head/output_bias"):
        head = model.get_layer("masked_lm_head")
        links += [
            *_dense(head.transform_dense, hub, "mlm_head/intermediate_dense"),
            *_layer_norm(head.layer_norm, hub, "mlm_head/intermediate_layer_norm"),
            identical_link(head.output_bias, hub["mlm_head/output_bias"]),
        ]
    return links


class _VariablesByPath:
    def __init__(self, hub_model):
        self.variables = {variable.path: variable for variable in hub_model.weights}
        self.model_name = type(hub_model).__name__

    def has(self, path):
        return path in self.variables

    def __getitem__(self, path):
        try:
            return self.variables[path]
        except KeyError:
            raise ValueError(
                f"keras-hub {self.model_name} has no variable {path!r}; this keras-hub "
                "version lays BERT out differently from the one kbert was written for."
            ) from None


# --- Tokenizer -------------------------------------------------------------------------------


def load_keras_hub_tokenizer(folder, config):
    """kbert's `BertTokenizer` for a keras-hub preset's `tokenizer.json` and vocabulary."""
    from kbert.tokenizer.bert_tokenizer import BertTokenizer

    folder = pathlib.Path(folder)
    vocabulary = folder / VOCABULARY_FILE
    if not vocabulary.is_file():
        logger.warning(
            "%s has no %s; the model is imported without a tokenizer.", folder, VOCABULARY_FILE
        )
        return None
    # keras-hub's defaults, which differ from kbert's.
    settings = {"lowercase": False, "strip_accents": False}
    config_path = folder / TOKENIZER_CONFIG_FILE
    if os.path.lexists(config_path):
        tokenizer_config = read_json(config_path, "config", folder)
        if not _is_keras_hub_class(tokenizer_config, "BertTokenizer"):
            raise ValueError(f"{config_path} does not describe keras-hub's BertTokenizer.")
        arguments = tokenizer_config.get("config") or {}
        for key, expected in (("split", True), ("suffix_indicator", "##"), ("oov_token", "[UNK]")):
            if arguments.get(key, expected) != expected:
                raise ValueError(
                    f"{config_path}: kbert's tokenizer supports {key}={expected!r} only. "
                    f"Received: {key}={arguments[key]!r}"
                )
        for key in ("lowercase", "strip_accents"):
            if key in arguments:
                if not isinstance(arguments[key], bool):
                    raise ValueError(
                        f"{config_path}: `{key}` must be true or false. Received: {arguments[key]!r}"
                    )
                settings[key] = arguments[key]
    return BertTokenizer(vocabulary, max_length=config.max_positions, **settings)
