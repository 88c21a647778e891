"""Every kbert Keras class known to Keras by its registered name, before its module is imported.

`keras.saving.load_model("x.keras")` finds a class by its registered name
("kbert>BertMaskedLM") among Keras' custom objects, which a class joins when its module
runs `keras.saving.register_keras_serializable`. kbert's modules load lazily, so after a
bare `import kbert` none of them would be registered.

`install_keras_registry` (run by `import kbert`) closes the gap through public doors
only, without importing Keras itself: once Keras is loaded (now, or whenever it first
loads: a finder for the top-level `keras` module on Python's `sys.meta_path` hears of
it), every class of `KERAS_CLASSES` not registered yet is registered under its name
(`keras.saving.register_keras_serializable`) as a stand-in whose `from_config` imports
the class's module and builds the real class. The module's own registration then
replaces the stand-in, so saving and every later load see the real class.
"""

import importlib
import importlib.abc
import importlib.machinery
import sys

from kbert.lazy_imports import names_by_module
from kbert.model_table import BUILT_IN_CLASSES

KBERT_PACKAGE = "kbert"
KERAS_MODULE = "keras"

# Every class kbert registers (`register_keras_serializable(package="kbert")`) -> its
# module: kbert's model classes from the model table, and these layers, losses, metrics
# and optimizers. tests/test_keras_archives.py checks the table against the source.
KERAS_CLASSES = names_by_module(
    {
        "kbert.layers.bert_embeddings": ("BertEmbeddings",),
        "kbert.layers.bert_encoder_block": ("BertEncoderBlock",),
        "kbert.layers.bert_pooler": ("BertPooler",),
        "kbert.layers.bert_self_attention": ("BertSelfAttention",),
        "kbert.layers.host_truncated_normal": ("HostTruncatedNormal",),
        "kbert.layers.masked_lm_head": ("MaskedLMHead",),
        "kbert.pretraining.dynamic_masking": ("DynamicMasking",),
        "kbert.training.bert_adamw": ("BertAdamW",),
        "kbert.training.ignore_class_accuracy": ("IgnoreClassAccuracy",),
        "kbert.training.optimization": ("LinearWarmupDecay",),
        "kbert.training.token_cross_entropy": ("TokenCrossEntropy",),
    }
) | {row.name: row.module for row in BUILT_IN_CLASSES}


def module_of(registered_name):
    """The kbert module that registers `registered_name` ("kbert>Name"), or None."""
    if not isinstance(registered_name, str):
        return None
    package, _, class_name = registered_name.partition(">")
    return KERAS_CLASSES.get(class_name) if package == KBERT_PACKAGE else None


def _stand_in(class_name, module_name):
    """A registrable class that builds `module_name.class_name` from a config."""

    def from_config(cls, config):
        real = getattr(importlib.import_module(module_name), class_name)
        return real.from_config(config)

    def get_config(self):
        raise TypeError(f"{class_name} is built from its config by {module_name}.")

    return type(
        class_name,
        (),
        {
            "__doc__": f"Stands in for {module_name}.{class_name} until that module loads.",
            "__module__": __name__,
            "stands_in_for": (module_name, class_name),
            "from_config": classmethod(from_config),
            "get_config": get_config,
        },
    )


def registered_object(registered_name):
    """`keras.saving.get_registered_object(registered_name)`, a stand-in replaced by the
    real class (its module imported): what kbert's loaders check and build."""
    import keras

    found = keras.saving.get_registered_object(registered_name)
    stands_in_for = getattr(found, "stands_in_for", None)
    if isinstance(found, type) and found.__module__ == __name__ and stands_in_for:
        module_name, class_name = stands_in_for
        return getattr(importlib.import_module(module_name), class_name)
    return found


def register_stand_ins():
    """Registers a stand-in for every kbert class Keras does not know yet (Keras loaded)."""
    import keras

    known = keras.saving.get_custom_objects()
    for class_name, module_name in KERAS_CLASSES.items():
        if f"{KBERT_PACKAGE}>{class_name}" not in known:
            register = keras.saving.register_keras_serializable(KBERT_PACKAGE, class_name)
            register(_stand_in(class_name, module_name))


class _AfterKerasLoader(importlib.abc.Loader):
    """Runs Keras' top-level module with its own loader, then registers the stand-ins."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        register_stand_ins()


class _KerasFinder(importlib.abc.MetaPathFinder):
    """Finds the `keras` package as usual, with `_AfterKerasLoader` as its loader."""

    def find_spec(self, fullname, path, target=None):
        if fullname != KERAS_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _AfterKerasLoader(spec.loader)
        return spec


def install_keras_registry():
    """Makes every class of `KERAS_CLASSES` findable by Keras (imports no Keras itself)."""
    if KERAS_MODULE in sys.modules:
        register_stand_ins()
    elif not any(isinstance(finder, _KerasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _KerasFinder())
