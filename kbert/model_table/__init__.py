"""The model table: what each kbert model class is, as plain data every layer reads.

One `ModelClass` row per class (the backbone and each task model): its module and
registered name, its head's weight layout, its inference verb, its Hugging Face and
keras-hub names, its kind and tab in the app. A new task head is one more row
(`register_model_class`), beside its model class, preprocessor and fine-tuning recipe
(`kbert.finetuning.task_specs.register_task`).

This package imports nothing of kbert's and no Keras: the app reads it on its UI thread.
"""

from kbert.model_table.model_class import APP_TABS
from kbert.model_table.model_class import SHAPE_LETTERS
from kbert.model_table.model_class import ModelClass
from kbert.model_table.model_classes import BUILT_IN_CLASSES
from kbert.model_table.model_classes import MODEL_CLASSES
from kbert.model_table.model_classes import class_with_verb
from kbert.model_table.model_classes import model_class
from kbert.model_table.model_classes import register_model_class

__all__ = [
    "APP_TABS",
    "BUILT_IN_CLASSES",
    "MODEL_CLASSES",
    "ModelClass",
    "SHAPE_LETTERS",
    "class_with_verb",
    "model_class",
    "register_model_class",
]
