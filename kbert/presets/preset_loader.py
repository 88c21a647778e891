"""Builds models from preset folders."""

import inspect
import logging
import os
import pathlib

from kbert.files.bounded_reader import read_json
from kbert.layers.host_truncated_normal import skipped_random_initialization
from kbert.models.bert_backbone import BertBackbone
from kbert.architecture.bert_config import BertConfig
from kbert.presets.model_source import resolve_preset
from kbert.presets.preset_registry import CONFIG_FILE, WEIGHTS_FILE
from kbert.presets.weights_file import read_weights

logger = logging.getLogger("kbert.presets")

SHARED_HEAD_ARGUMENTS = ("head_activation", "head_layer_norm_epsilon")


def read_preset_config(folder):
    """The parsed `config.json` of a preset folder, checked for the required keys.

    Read through `kbert.files.bounded_reader` (a regular file inside the folder, at most
    10 MB, depth-limited JSON); every error names the file.
    """
    path = pathlib.Path(folder) / CONFIG_FILE
    if not os.path.lexists(path):
        raise ValueError(f"Not a kbert preset: {str(folder)!r} has no {CONFIG_FILE}.")
    config = read_json(path, "config", folder)
    if not isinstance(config, dict):
        raise ValueError(
            f"{str(path)!r} must hold a JSON object. Received: a JSON {type(config).__name__}"
        )
    for key in ("class_name", "backbone"):
        if key not in config:
            raise ValueError(f"{str(path)!r} lacks the field `{key}`.")
    config.setdefault("task", {})
    for key, kind in (("class_name", str), ("backbone", dict), ("task", dict)):
        if not isinstance(config[key], kind):
            raise ValueError(
                f"{str(path)!r}: `{key}` must be a JSON {'string' if kind is str else 'object'}. "
                f"Received: {key}={config[key]!r:.80}"
            )
    return config


def read_backbone_config(folder, config):
    """The `BertConfig` of a preset's parsed `config`; errors name its config.json."""
    path = pathlib.Path(folder) / CONFIG_FILE
    try:
        return BertConfig.from_dict(config["backbone"])
    except ValueError as error:
        raise ValueError(f"{str(path)!r}, field `backbone`: {error}") from None


def assign_weights(variables, weights, source):
    """Assigns `weights[variable.path]` to each variable; every one must exist and fit."""
    missing = [v.path for v in variables if v.path not in weights]
    if missing:
        raise ValueError(f"{source} lacks weights for {missing}.")
    for variable in variables:
        value = weights[variable.path]
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(
                f"{source}: weight `{variable.path}` has shape {tuple(value.shape)}, but the "
                f"model expects {tuple(variable.shape)}."
            )
    for variable in variables:
        variable.assign(weights[variable.path])


def _group(weights, prefix):
    return {
        name[len(prefix) :]: value for name, value in weights.items() if name.startswith(prefix)
    }


def _load(folder, config=None):
    config = read_preset_config(folder) if config is None else config
    backbone_config = read_backbone_config(folder, config)
    weights = read_weights(pathlib.Path(folder) / WEIGHTS_FILE, folder=folder)
    backbone_weights = _group(weights, "backbone/")
    # The reading was bounded by what the file stores; the model is built only if the
    # file holds as many numbers as the config's model has.
    backbone_config.check_weights_hold(
        sum(value.size for value in backbone_weights.values()),
        pathlib.Path(folder) / CONFIG_FILE,
    )
    # Every backbone weight comes from the file (`assign_weights` checks), so none is drawn.
    with skipped_random_initialization():
        backbone = BertBackbone.from_config_object(backbone_config)
    assign_weights(backbone.weights, backbone_weights, f"Preset {str(folder)!r}")
    return config, backbone, _group(weights, "head/")


def load_backbone(preset):
    """The `BertBackbone` stored in `preset` (any preset: backbone or task)."""
    folder = resolve_preset(preset)
    _, backbone, _ = _load(folder)
    return backbone


def _load_tokenizer(folder):
    if os.path.lexists(folder / "vocab.txt") or os.path.lexists(folder / "tokenizer.json"):
        from kbert.tokenizer.bert_tokenizer import BertTokenizer

        return BertTokenizer.from_preset(folder)
    return None


# What each preset class holds, for messages about a head that is not there.
_HEADS = {
    "BertBackbone": "no task head",
    "BertPretrainer": "masked-LM and next-sentence heads",
    "BertMaskedLM": "a masked-LM head",
    "BertClassifier": "a classifier head",
    "BertTokenClassifier": "a token classifier head",
    "BertQuestionAnswerer": "a question-answering head",
}


def _task_class_of(config, folder):
    from kbert import models

    class_name = config["class_name"]
    task_class = getattr(models, class_name, None)
    if class_name == "BertBackbone":
        raise ValueError(
            f"The preset {str(folder)!r} holds a bare BertBackbone (no task head). Load it "
            "with BertBackbone.from_preset, or with the task class to start a new head "
            "(e.g. BertClassifier.from_preset(..., num_classes=2))."
        )
    if task_class is None or not hasattr(task_class, "head_layer_names"):
        raise ValueError(
            f"{str(folder)!r}: config.json names class_name={class_name!r}, which is not a "
            "kbert task model."
        )
    return task_class


def missing_head_message(task_class, source, class_name):
    """Why `source` (a `class_name` preset) cannot serve `task_class` without a new head."""
    task = task_class.fine_tuning_task
    message = (
        f"The model {str(source)!r} has no {task_class.__name__} head: it is a {class_name} "
        f"({_HEADS.get(class_name, 'another head')})."
    )
    if task is None:
        return message + (
            " Pretrain or continue pretraining one (`kbert pretrain --init-from "
            f"{source} ...`), or use a model with a masked-LM head, such as demo."
        )
    message += (
        f" Fine-tune one first, e.g. `kbert finetune --task {task} --model {source} "
        f"--train train-data --output runs/{task}`, then use runs/{task}/model"
    )
    if "num_classes" in inspect.signature(task_class.__init__).parameters:
        message += (
            "; or, in Python, pass num_classes= (or label_names=) to start a new head for "
            "training"
        )
    return message + "."


def build_task(task_class, preset, **kwargs):
    """A `task_class` model whose backbone (and, where present, head) come from `preset`.

    `task_class` may be `BertTask` itself: the class the preset holds is built. Heads
    that need labels (classifiers) must be in the preset unless `num_classes` or
    `label_names` is given for a new one. The model is compiled with its defaults.
    """
    folder = resolve_preset(preset)
    config = read_preset_config(folder)
    if not hasattr(task_class, "preprocessor_class") or task_class.preprocessor_class is None:
        task_class = _task_class_of(config, folder)
    if (
        config["class_name"] != task_class.__name__
        and "num_classes" in inspect.signature(task_class.__init__).parameters
        and kwargs.get("num_classes") is None
        and kwargs.get("label_names") is None
    ):
        raise ValueError(missing_head_message(task_class, preset, config["class_name"]))
    config, backbone, head_weights = _load(folder, config)
    if config["class_name"] == task_class.__name__:
        task_arguments = dict(config["task"])
    else:
        # Heads shared across task classes (the masked-LM head of a pretrainer serves a
        # BertMaskedLM) keep their settings.
        accepted = inspect.signature(task_class.__init__).parameters
        task_arguments = {
            key: value
            for key, value in config["task"].items()
            if key in SHARED_HEAD_ARGUMENTS and key in accepted
        }
    task_arguments.update(kwargs)
    try:
        model = task_class(backbone, **task_arguments)
    except ValueError as error:
        raise ValueError(f"{str(folder / CONFIG_FILE)!r}, field `task`: {error}") from None

    backbone_ids = {id(v) for v in backbone.weights}
    for layer in model.head_layers():
        variables = [v for v in layer.weights if id(v) not in backbone_ids]
        problems = []
        for variable in variables:
            value = head_weights.get(variable.path)
            if value is None:
                problems.append(f"`{variable.path}` is missing")
            elif tuple(value.shape) != tuple(variable.shape):
                problems.append(
                    f"`{variable.path}` has shape {tuple(value.shape)} in the preset, "
                    f"{tuple(variable.shape)} in the model"
                )
        if problems:
            model.freshly_initialized_heads.append(layer.name)
            logger.warning(
                "%s: head `%s` is freshly initialised (the preset %r, a %s, does not "
                "provide it: %s). Fine-tune before use.",
                task_class.__name__,
                layer.name,
                str(folder),
                config["class_name"],
                "; ".join(problems),
            )
        else:
            for variable in variables:
                variable.assign(head_weights[variable.path])
    for name in config.get("untrained_heads", []):
        if name in task_class.head_layer_names and name not in model.freshly_initialized_heads:
            model.freshly_initialized_heads.append(name)
            logger.warning(
                "%s: head `%s` of the preset %r was saved untrained. Fine-tune before use.",
                task_class.__name__,
                name,
                str(folder),
            )
    model.tokenizer = _load_tokenizer(folder)
    model.compile()
    return model
