"""How a model class is named in a preset: its class in the model table for the weight
layout, and the exact class in Keras' registry of serializable objects."""

import keras

from kbert.model_table import MODEL_CLASSES

KBERT_PACKAGE = "kbert"


def kbert_class_name(cls):
    """The model-table class `cls` is or derives from ("BertClassifier" for a user's subclass).

    That is the row (`kbert.model_table.MODEL_CLASSES`) whose weight layout
    (`kbert.architecture.bert_layout`) and checkpoint formats apply: the first class of
    `cls`'s method resolution order that Keras' registry knows by the row's
    `registered_name`.

    Raises:
        ValueError: when `cls` derives from no class of the model table.
    """
    for klass in cls.__mro__:
        row = MODEL_CLASSES.get(klass.__name__)
        if row is not None and keras.saving.get_registered_name(klass) == row.registered_name:
            return klass.__name__
    raise ValueError(f"`cls` must derive from a kbert model class. Received: cls={cls!r}")


def registered_name(cls):
    """`cls`'s name in Keras' registry ("package>Name"), or None for kbert's own classes.

    A subclass that is not registered with `keras.saving.register_keras_serializable`
    has no name Keras could find it by: its presets load as its kbert class.
    """
    name = keras.saving.get_registered_name(cls)
    if name == f"{KBERT_PACKAGE}>{cls.__name__}" or ">" not in name:
        return None
    return name
