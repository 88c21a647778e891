"""Models built from plain data: a preset's, or any checkpoint's `CheckpointData`.

The files are read below, as plain data (`kbert.checkpoints`: the config and every
backbone shape checked before a value is read); this module builds the Keras model and
assigns the weights by path. Every backbone weight comes from the data, so the backbone
is built without drawing initial values.

The loader receives the class it builds: `BertBackbone.from_preset` and
`BertTask.from_preset` pass `cls` (and the classes it is checked against) down, so this
module imports no model class and a subclass gets an instance of itself. The class a
preset holds is found through Keras' registry of serializable objects: a preset's
`config.json` names it by `registered_name` (`"my_package>MyClassifier"`), or by
`class_name` for kbert's own classes (`"kbert>" + class_name`).
"""

import inspect
import logging
import pathlib


from kbert.checkpoints import kbert_preset
from kbert.checkpoints.formats import read_folder
from kbert.keras_registry import registered_object
from kbert.layers.host_truncated_normal import skipped_random_initialization
from kbert.model_table import MODEL_CLASSES
from kbert.models.registered_names import KBERT_PACKAGE
from kbert.models.registered_names import kbert_class_name
from kbert.presets.model_source import is_local_source
from kbert.presets.model_source import resolve_preset
from kbert.tokenizer.bert_tokenizer import BertTokenizer

logger = logging.getLogger("kbert.presets")

SHARED_HEAD_ARGUMENTS = ("head_activation", "head_layer_norm_epsilon")
BACKBONE_PREFIX = "backbone/"
HEAD_PREFIX = "head/"


def registered_class(class_name, registered_name=None, folder=None):
    """The Keras-registered class a checkpoint names, or None when Keras does not know it.

    Args:
        class_name: kbert's class of the checkpoint (`CheckpointData.class_name`).
        registered_name: the exact class it was saved as (`"package>Name"`), if recorded.
        folder: where the checkpoint is, for the message.

    Raises:
        ValueError: when `registered_name` is given and Keras does not know it (the
            module that defines the class was not imported).
    """
    if registered_name is not None:
        found = registered_object(registered_name)
        if found is None:
            raise ValueError(
                f"{str(folder)!r} was saved from the class `{registered_name}`, which Keras "
                "does not know in this process: import the module that defines it (a class "
                "registered with keras.saving.register_keras_serializable) before loading, "
                f"or load it as kbert's {class_name}: `{class_name}.from_preset(...)`."
            )
        return found
    row = MODEL_CLASSES.get(class_name)
    return registered_object(
        f"{KBERT_PACKAGE}>{class_name}" if row is None else row.registered_name
    )


def _backbone_of(backbone_class, data, dtype, load_weights, **kwargs):
    """A `backbone_class` model of `data`'s config, with its weights unless not asked."""
    if not load_weights:
        return backbone_class.from_config_object(data.config, dtype=dtype, **kwargs)
    # Every backbone weight is assigned below (the reader checked each one), so none is drawn.
    with skipped_random_initialization():
        backbone = backbone_class.from_config_object(data.config, dtype=dtype, **kwargs)
    for variable in backbone.weights:
        variable.assign(data.weights[BACKBONE_PREFIX + variable.path])
    return backbone


def tokenizer_of(data):
    """The `BertTokenizer` of `data`, or None when it has none."""
    return None if data.tokenizer is None else BertTokenizer.from_tokenizer_data(data.tokenizer)


def load_backbone(cls, preset, dtype=None, load_weights=True, **kwargs):
    """A `cls` (a `BertBackbone` class) with the backbone stored in `preset`.

    Any preset has a backbone: a task preset's serves too. When the preset holds a
    registered subclass of `cls`, that subclass is built.

    Args:
        cls: the backbone class asked for.
        preset: any model source (`kbert.presets.resolve_preset`).
        dtype: the backbone's dtype policy (e.g. "bfloat16"); None for the global one.
        load_weights: False builds the architecture with freshly drawn weights.
        **kwargs: other constructor arguments (`name`, ...).
    """
    folder = resolve_preset(preset)
    config = kbert_preset.read_preset_config(folder)
    data = kbert_preset.read_preset(folder, config)
    held = registered_class(data.class_name, data.registered_name, folder)
    target = held if inspect.isclass(held) and issubclass(held, cls) else cls
    return _backbone_of(target, data, dtype, load_weights, **kwargs)


def _holds(class_name):
    """What a preset of `class_name` holds, in words (the model table's `holds`)."""
    row = MODEL_CLASSES.get(class_name)
    return "another head" if row is None else row.holds


def missing_head_message(task_class, source, class_name):
    """Why `source` (a `class_name` preset) cannot serve `task_class` without a new head."""
    task = task_class.fine_tuning_task
    if class_name == task_class.__name__:  # the head is there, saved before any training
        message = (
            f"The model {str(source)!r} is a {class_name} whose head was saved untrained: "
            "its predictions would mean nothing."
        )
    else:
        message = (
            f"The model {str(source)!r} has no {task_class.__name__} head: it is a "
            f"{class_name} ({_holds(class_name)})."
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


def _head_problems(layer, variables, data):
    """Why `data` cannot provide the head `layer` whole (empty when it can)."""
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
    return problems


def _assign_heads(model, data, folder):
    """Assigns each head layer the data provides whole; the others stay freshly drawn."""
    task_class = type(model)
    backbone_ids = {id(v) for v in model.backbone.weights}
    for layer in model.head_layers():
        variables = [v for v in layer.weights if id(v) not in backbone_ids]
        problems = _head_problems(layer, variables, data)
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


def _task_arguments(task_class, data, kwargs):
    """The preset's task arguments that `task_class` takes, overridden by `kwargs`.

    All of them when the preset holds this kind of task; otherwise only the settings of
    heads shared across task classes (the masked-LM head of a pretrainer serves a
    `BertMaskedLM`).
    """
    if data.class_name == kbert_class_name(task_class):
        arguments = dict(data.task)
    else:
        accepted = inspect.signature(task_class.__init__).parameters
        arguments = {
            key: value
            for key, value in data.task.items()
            if key in SHARED_HEAD_ARGUMENTS and key in accepted
        }
    arguments.update(kwargs)
    return arguments


def build_model(task_class, data, folder, dtype=None, load_weights=True, **kwargs):
    """A `task_class` model on the backbone of `data`, its head from `data` where present.

    `kwargs` override the task arguments. The model carries the data's tokenizer and is
    compiled with its defaults.
    """
    backbone = _backbone_of(task_class.backbone_class, data, dtype, load_weights)
    try:
        model = task_class(backbone, **_task_arguments(task_class, data, kwargs))
    except ValueError as error:
        raise ValueError(
            f"{str(pathlib.Path(folder) / kbert_preset.CONFIG_FILE)!r}, field `task`: {error}"
        ) from None
    if load_weights:
        _assign_heads(model, data, folder)
    model.tokenizer = tokenizer_of(data)
    model.compile()
    return model


def _task_class(cls, base, held, class_name, folder):
    """The class `cls.from_preset` builds for a preset holding `held` (a class or None).

    A preset's own class when it is a `cls` (`BertTask.from_preset` returns what a
    preset holds; a subclass's preset gives that subclass); `cls` itself when it is a
    concrete task (a subclass of the preset's class, or a new head on its backbone).
    """
    if inspect.isclass(held) and issubclass(held, cls):
        return held
    if cls.preprocessor_class is not None:
        return cls
    if class_name == "BertBackbone":
        raise ValueError(
            f"The preset {str(folder)!r} holds a bare BertBackbone (no task head). Load it "
            "with BertBackbone.from_preset, or with the task class to start a new head "
            "(e.g. BertClassifier.from_preset(..., num_classes=2))."
        )
    if not (inspect.isclass(held) and issubclass(held, base)):
        raise ValueError(
            f"{str(folder)!r}: config.json names class_name={class_name!r}, which is not a "
            "kbert task model."
        )
    raise ValueError(
        f"The preset {str(folder)!r} holds a {held.__name__}, which is not a {cls.__name__}: "
        f"load it with {held.__name__}.from_preset or BertTask.from_preset."
    )


def load_task(cls, base, preset, dtype=None, load_weights=True, **kwargs):
    """A model of the task class `cls` whose backbone (and head, where present) come from `preset`.

    Args:
        cls: the class `from_preset` was called on; `BertTask` itself (or an abstract
            subclass) builds the class the preset holds.
        base: `BertTask`, the class every task model derives from.
        preset: any model source (`kbert.presets.resolve_preset`).
        dtype: the backbone's dtype policy; None for the global one.
        load_weights: False builds the architecture with freshly drawn weights.
        **kwargs: task arguments; they override the preset's. Heads that need labels
            (classifiers) must be in the preset unless `num_classes` or `label_names` is
            given for a new one.
    """
    folder = resolve_preset(preset)
    config = kbert_preset.read_preset_config(folder)
    class_name = config["class_name"]
    held = registered_class(class_name, kbert_preset.registered_name_of(folder, config), folder)
    task_class = _task_class(cls, base, held, class_name, folder)
    if (
        class_name != kbert_class_name(task_class)
        and "num_classes" in inspect.signature(task_class.__init__).parameters
        and kwargs.get("num_classes") is None
        and kwargs.get("label_names") is None
    ):
        raise ValueError(missing_head_message(task_class, preset, class_name))
    data = kbert_preset.read_preset(folder, config)
    return build_model(task_class, data, folder, dtype=dtype, load_weights=load_weights, **kwargs)


def load_checkpoint(source, lowercase=None):
    """The model and tokenizer of a checkpoint folder in any supported format, read directly.

    Internal (tests and tools that must not write the cache): users load models with
    `from_preset`. The folder is read in memory, never converted into the cache.

    Args:
        source: a checkpoint folder (kbert preset, Hugging Face, Google or keras-hub), or
            any other source `kbert.presets.resolve_preset` takes.
        lowercase: force the tokenizer to lower-case (True) or not (False). None keeps
            what the checkpoint records (or, for Google checkpoints, its folder name says).

    Returns:
        `(model, tokenizer, checkpoint_format)`: a backbone or the task model the
        checkpoint's heads make (carrying the tokenizer as `.tokenizer`); tokenizer may
        be None.
    """
    folder = source if is_local_source(source) else resolve_preset(source)
    folder = pathlib.Path(folder).expanduser()
    data, checkpoint_format = read_folder(folder, lowercase)
    backbone_class = registered_class("BertBackbone")
    model_class = registered_class(data.class_name, data.registered_name, folder)
    if inspect.isclass(model_class) and issubclass(model_class, backbone_class):
        model = _backbone_of(model_class, data, None, True)
        tokenizer = tokenizer_of(data)
    elif inspect.isclass(model_class) and getattr(model_class, "preprocessor_class", None):
        model = build_model(model_class, data, folder)
        tokenizer = model.tokenizer
    else:
        raise ValueError(
            f"{str(folder)!r}: config.json names class_name={data.class_name!r}, which is not "
            "a kbert model."
        )
    logger.info(
        "Built %s from %s (%d parameters).", type(model).__name__, folder, model.count_params()
    )
    return model, tokenizer, checkpoint_format
