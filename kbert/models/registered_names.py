"""How a model class is named in a preset: kbert's class for the weight layout, and the
exact class in Keras' registry of serializable objects."""

import keras

KBERT_PACKAGE = "kbert"


def kbert_class_name(cls):
    """The kbert class `cls` is or derives from ("BertClassifier" for a user's subclass).

    That is what the weight layout (`kbert.architecture.bert_layout.TASK_HEADS`) and every
    checkpoint format know.

    Raises:
        ValueError: when `cls` derives from no kbert model class.
    """
    for klass in cls.__mro__:
        if keras.saving.get_registered_name(klass) == f"{KBERT_PACKAGE}>{klass.__name__}":
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
