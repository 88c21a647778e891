"""Models built from plain data: a preset's, or any checkpoint's `CheckpointData`.

The files are read below, as plain data (`kbert.checkpoints`: the config and every
backbone shape checked before a value is read); this module builds the Keras model and
assigns the weights by path. Every backbone weight comes from the data, so the backbone
is built without drawing initial values.
"""

import inspect
import logging
import pathlib

from kbert.checkpoints import kbert_preset
from kbert.checkpoints.formats import read_folder
from kbert.layers.host_truncated_normal import skipped_random_initialization
from kbert.models.bert_backbone import BertBackbone
from kbert.presets.model_source import is_local_source
from kbert.presets.model_source import resolve_preset
from kbert.tokenizer.bert_tokenizer import BertTokenizer

logger = logging.getLogger("kbert.presets")

SHARED_HEAD_ARGUMENTS = ("head_activation", "head_layer_norm_epsilon")
BACKBONE_PREFIX = "backbone/"
HEAD_PREFIX = "head/"

# What each preset class holds, for messages about a head that is not there.
_HEADS = {
    "BertBackbone": "no task head",
    "BertPretrainer": "masked-LM and next-sentence heads",
    "BertMaskedLM": "a masked-LM head",
    "BertClassifier": "a classifier head",
    "BertTokenClassifier": "a token classifier head",
    "BertQuestionAnswerer": "a question-answering head",
}


def build_backbone(data):
    """The `BertBackbone` of `data` (a `CheckpointData`) with its backbone weights."""
    # Every backbone weight is assigned below (the reader checked each one), so none is drawn.
    with skipped_random_initialization():
        backbone = BertBackbone.from_config_object(data.config)
    for variable in backbone.weights:
        variable.assign(data.weights[BACKBONE_PREFIX + variable.path])
    return backbone


def tokenizer_of(data):
    """The `BertTokenizer` of `data`, or None when it has none."""
    return None if data.tokenizer is None else BertTokenizer.from_tokenizer_data(data.tokenizer)


def load_backbone(preset):
    """The `BertBackbone` stored in `preset` (any model source, backbone or task preset)."""
    return build_backbone(kbert_preset.read_preset(resolve_preset(preset)))


def _model_class(class_name, folder):
    from kbert import models

    model_class = getattr(models, class_name, None)
    if model_class is None or not hasattr(model_class, "from_preset"):
        raise ValueError(
            f"{str(folder)!r}: config.json names class_name={class_name!r}, which is not a "
            "kbert model."
        )
    return model_class


def _task_class_of(config, folder):
    class_name = config["class_name"]
    if class_name == "BertBackbone":
        raise ValueError(
            f"The preset {str(folder)!r} holds a bare BertBackbone (no task head). Load it "
            "with BertBackbone.from_preset, or with the task class to start a new head "
            "(e.g. BertClassifier.from_preset(..., num_classes=2))."
        )
    task_class = _model_class(class_name, folder)
    if not hasattr(task_class, "head_layer_names"):
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


def _assign_heads(model, data, folder):
    """Assigns each head layer the data provides whole; the others stay freshly drawn."""
    task_class = type(model)
    backbone_ids = {id(v) for v in model.backbone.weights}
    for layer in model.head_layers():
        variables = [v for v in layer.weights if id(v) not in backbone_ids]
        problems = []
        for variable in variables:
            value = data.weights.get(HEAD_PREFIX + variable.path)
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
                data.class_name,
                "; ".join(problems),
            )
        else:
            for variable in variables:
                variable.assign(data.weights[HEAD_PREFIX + variable.path])
    for name in data.untrained_heads:
        if name in task_class.head_layer_names and name not in model.freshly_initialized_heads:
            model.freshly_initialized_heads.append(name)
            logger.warning(
                "%s: head `%s` of the preset %r was saved untrained. Fine-tune before use.",
                task_class.__name__,
                name,
                str(folder),
            )


def build_model(task_class, data, folder, **kwargs):
    """A `task_class` model on the backbone of `data`, its head from `data` where present.

    Heads shared across task classes (the masked-LM head of a pretrainer serves a
    `BertMaskedLM`) keep their settings; `kwargs` override the task arguments. The model
    carries the data's tokenizer and is compiled with its defaults.
    """
    backbone = build_backbone(data)
    if data.class_name == task_class.__name__:
        task_arguments = dict(data.task)
    else:
        accepted = inspect.signature(task_class.__init__).parameters
        task_arguments = {
            key: value
            for key, value in data.task.items()
            if key in SHARED_HEAD_ARGUMENTS and key in accepted
        }
    task_arguments.update(kwargs)
    try:
        model = task_class(backbone, **task_arguments)
    except ValueError as error:
        raise ValueError(
            f"{str(pathlib.Path(folder) / kbert_preset.CONFIG_FILE)!r}, field `task`: {error}"
        ) from None
    _assign_heads(model, data, folder)
    model.tokenizer = tokenizer_of(data)
    model.compile()
    return model


def build_task(task_class, preset, **kwargs):
    """A `task_class` model whose backbone (and, where present, head) come from `preset`.

    `task_class` may be `BertTask` itself: the class the preset holds is built. Heads
    that need labels (classifiers) must be in the preset unless `num_classes` or
    `label_names` is given for a new one. The model is compiled with its defaults.
    """
    folder = resolve_preset(preset)
    config = kbert_preset.read_preset_config(folder)
    if not hasattr(task_class, "preprocessor_class") or task_class.preprocessor_class is None:
        task_class = _task_class_of(config, folder)
    if (
        config["class_name"] != task_class.__name__
        and "num_classes" in inspect.signature(task_class.__init__).parameters
        and kwargs.get("num_classes") is None
        and kwargs.get("label_names") is None
    ):
        raise ValueError(missing_head_message(task_class, preset, config["class_name"]))
    return build_model(task_class, kbert_preset.read_preset(folder, config), folder, **kwargs)


def load_checkpoint(source, lowercase=None):
    """The model and tokenizer of a checkpoint in any supported format, or any model source.

    Args:
        source: a checkpoint folder (kbert preset, Hugging Face, Google or keras-hub), or
            any other source `kbert.presets.resolve_preset` takes (a built-in or
            published name, an `hf://` or `kaggle://` handle), read through the preset it
            resolves to.
        lowercase: force the tokenizer to lower-case (True) or not (False). None keeps
            what the checkpoint records (or, for Google checkpoints, its folder name says).

    Returns:
        `(model, tokenizer, checkpoint_format)`: the model is a `BertBackbone` or the
        task model the checkpoint's heads make (carrying the tokenizer as `.tokenizer`);
        tokenizer may be None.

    Example:

    >>> model, tokenizer, _ = load_checkpoint("downloads/uncased_L-12_H-768_A-12")
    >>> type(model).__name__
    'BertPretrainer'
    """
    folder = source if is_local_source(source) else resolve_preset(source)
    folder = pathlib.Path(folder).expanduser()
    data, checkpoint_format = read_folder(folder, lowercase)
    model_class = _model_class(data.class_name, folder)
    if model_class is BertBackbone:
        model = build_backbone(data)
        tokenizer = tokenizer_of(data)
    else:
        model = build_model(model_class, data, folder)
        tokenizer = model.tokenizer
    logger.info(
        "Built %s from %s (%d parameters).", type(model).__name__, folder, model.count_params()
    )
    return model, tokenizer, checkpoint_format
