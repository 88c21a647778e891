"""What one kbert model class is, as plain data that every layer reads."""

import dataclasses
import importlib

# The letters a head variable's shape is written with (`kbert.architecture.bert_layout`).
SHAPE_LETTERS = ("V", "H", "3H", "I", "P", "T", "C", "2", "1")
# The app's tabs a model can open in (the values of the app's `TabKey`).
APP_TABS = ("masked-words", "question-answering", "classify")


def _check_text(name, value, optional=False):
    if optional and value is None:
        return
    if not isinstance(value, str) or not value:
        raise ValueError(f"`{name}` must be a non-empty string. Received: {name}={value!r}")


def _check_head_layers(head_layers):
    """Raises ValueError unless `head_layers` is `((layer, ((variable, shape), ...)), ...)`."""
    if not isinstance(head_layers, tuple):
        raise ValueError(f"`head_layers` must be a tuple. Received: head_layers={head_layers!r}")
    for layer in head_layers:
        if not (isinstance(layer, tuple) and len(layer) == 2 and isinstance(layer[1], tuple)):
            raise ValueError(
                "Each head layer must be `(layer_name, ((variable, shape), ...))`. "
                f"Received: {layer!r}"
            )
        _check_text("layer_name", layer[0])
        for variable in layer[1]:
            if not (isinstance(variable, tuple) and len(variable) == 2):
                raise ValueError(
                    f"Each variable of head layer {layer[0]!r} must be `(name, shape)`. "
                    f"Received: {variable!r}"
                )
            _check_text("variable", variable[0])
            shape = variable[1]
            if not isinstance(shape, tuple) or not set(shape) <= set(SHAPE_LETTERS):
                raise ValueError(
                    f"The shape of `{layer[0]}/{variable[0]}` must be a tuple of "
                    f"{SHAPE_LETTERS}. Received: shape={shape!r}"
                )
    names = [layer[0] for layer in head_layers]
    if len(set(names)) != len(names):
        raise ValueError(f"Head layer names must differ. Received: {names}")


@dataclasses.dataclass(frozen=True)
class ModelClass:
    """One kbert model class (the backbone, or a task model) as plain data.

    The model table (`kbert.model_table.MODEL_CLASSES`) holds one per class; the Keras
    registry's stand-ins, the weight layout, the checkpoint formats, preset messages,
    fine-tuning probes and the app's model descriptions all read it. Importing it loads
    no Keras. A package adds a class with `kbert.model_table.register_model_class`.

    Attributes:
        name: the class's name ("BertClassifier").
        module: the module that defines it ("kbert.models.bert_classifier").
        package: its package in Keras' registry of serializable objects: the class is
            registered as `package>name` (`keras.saving.register_keras_serializable`).
        holds: what a preset of the class holds, in words ("a classifier head").
        head_layers: the head's weight layout, `((layer, ((variable, shape), ...)), ...)`
            in the order the model creates them; shapes in the letters of
            `SHAPE_LETTERS` ("C": one per class, see `kbert.architecture.bert_layout`).
            A layer that several classes share (the masked-LM head) has the same
            variables in each.
        inference_verb: the model's method that answers one input ("classify",
            "answer"); None for a class that answers none.
        huggingface_architecture: transformers' architecture with the same heads
            ("BertForSequenceClassification"), or None.
        keras_hub_task: `(task class, its module, its preprocessor class)` of the
            keras-hub task with the same head, or None.
        app_kind: what the model does, in the app's words ("classifier").
        app_tab: the app's tab that uses it, one of `APP_TABS`.

    Example:

    >>> ModelClass(
    ...     name="BertRegressor",
    ...     module="my_package.bert_regressor",
    ...     package="my_package",
    ...     holds="a regression head",
    ...     head_layers=(("regression_head", (("kernel", ("H", "1")), ("bias", ("1",)))),),
    ...     inference_verb="regress",
    ...     app_kind="regressor",
    ...     app_tab="classify",
    ... )
    """

    name: str
    module: str
    package: str = "kbert"
    holds: str = "another head"
    head_layers: tuple = ()
    inference_verb: str = None
    huggingface_architecture: str = None
    keras_hub_task: tuple = None
    app_kind: str = None
    app_tab: str = "masked-words"

    def __post_init__(self):
        for name in ("name", "module", "package", "holds"):
            _check_text(name, getattr(self, name))
        for name in ("inference_verb", "huggingface_architecture", "app_kind"):
            _check_text(name, getattr(self, name), optional=True)
        _check_head_layers(self.head_layers)
        task = self.keras_hub_task
        if task is not None and not (
            isinstance(task, tuple) and len(task) == 3 and all(isinstance(n, str) for n in task)
        ):
            raise ValueError(
                "`keras_hub_task` must be None or (task class, module, preprocessor class). "
                f"Received: keras_hub_task={task!r}"
            )
        if self.app_tab not in APP_TABS:
            raise ValueError(f"`app_tab` must be one of {APP_TABS}. Received: app_tab={self.app_tab!r}")

    @property
    def registered_name(self):
        """The class's name in Keras' registry, "package>Name"."""
        return f"{self.package}>{self.name}"

    @property
    def head_layer_names(self):
        """The names of the head's layers, in order."""
        return tuple(layer for layer, _ in self.head_layers)

    @property
    def has_class_head(self):
        """Whether the head has one output per class (it needs `num_classes`)."""
        return any("C" in shape for _, variables in self.head_layers for _, shape in variables)

    def keras_class(self):
        """The model class itself, from its module (imported now: it loads Keras)."""
        return getattr(importlib.import_module(self.module), self.name)
