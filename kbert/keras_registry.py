"""Every kbert Keras class known to Keras' registry by name, before its module is imported.

`keras.saving.load_model("x.keras")` finds a class by its registered name
("kbert>BertMaskedLM") in Keras' dictionary of custom objects, which a class joins when
its module runs `keras.saving.register_keras_serializable`. kbert's modules load lazily,
so after a bare `import kbert` that dictionary would hold none of them.

`install_keras_registry` (run by `import kbert`) makes the dictionary complete without
importing Keras or a backend: once Keras' registry module is imported (now, or whenever
Keras first loads), its dictionary is wrapped so that a lookup of a name in
`KERAS_CLASSES` imports the kbert module that registers it. Nothing else changes: every
other name is looked up as before, and a class registers itself as it always did.
"""

import importlib
import importlib.abc
import importlib.machinery
import sys

from kbert.lazy_imports import names_by_module

KBERT_PACKAGE = "kbert"
REGISTRY_MODULE = "keras.src.saving.object_registration"

# Every class kbert registers (`register_keras_serializable(package="kbert")`) -> its
# module. tests/test_keras_registry.py checks the table against the source.
KERAS_CLASSES = names_by_module(
    {
        "kbert.layers.bert_embeddings": ("BertEmbeddings",),
        "kbert.layers.bert_encoder_block": ("BertEncoderBlock",),
        "kbert.layers.bert_pooler": ("BertPooler",),
        "kbert.layers.bert_self_attention": ("BertSelfAttention",),
        "kbert.layers.host_truncated_normal": ("HostTruncatedNormal",),
        "kbert.layers.masked_lm_head": ("MaskedLMHead",),
        "kbert.models.bert_backbone": ("BertBackbone",),
        "kbert.models.bert_classifier": ("BertClassifier",),
        "kbert.models.bert_masked_lm": ("BertMaskedLM",),
        "kbert.models.bert_multiple_choice": ("BertMultipleChoice",),
        "kbert.models.bert_pretrainer": ("BertPretrainer",),
        "kbert.models.bert_question_answerer": ("BertQuestionAnswerer",),
        "kbert.models.bert_token_classifier": ("BertTokenClassifier",),
        "kbert.pretraining.dynamic_masking": ("DynamicMasking",),
        "kbert.training.bert_adamw": ("BertAdamW",),
        "kbert.training.ignore_class_accuracy": ("IgnoreClassAccuracy",),
        "kbert.training.optimization": ("LinearWarmupDecay",),
        "kbert.training.token_cross_entropy": ("TokenCrossEntropy",),
    }
)


def module_of(registered_name):
    """The kbert module that registers `registered_name` ("kbert>Name"), or None."""
    if not isinstance(registered_name, str):
        return None
    package, _, class_name = registered_name.partition(">")
    return KERAS_CLASSES.get(class_name) if package == KBERT_PACKAGE else None


class _KbertObjects(dict):
    """Keras' custom-object dictionary, importing a kbert class's module when asked for it."""

    def _register(self, name):
        module = module_of(name)
        if module is not None and not dict.__contains__(self, name):
            # A module being imported is in sys.modules already: no recursion.
            importlib.import_module(module)

    def __contains__(self, name):
        self._register(name)
        return dict.__contains__(self, name)

    def __getitem__(self, name):
        self._register(name)
        return dict.__getitem__(self, name)

    def get(self, name, default=None):
        self._register(name)
        return dict.get(self, name, default)


def _wrap_registry(module):
    if not isinstance(module.GLOBAL_CUSTOM_OBJECTS, _KbertObjects):
        module.GLOBAL_CUSTOM_OBJECTS = _KbertObjects(module.GLOBAL_CUSTOM_OBJECTS)


class _WrappingLoader(importlib.abc.Loader):
    """Runs Keras' registry module with its own loader, then wraps its dictionary."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _wrap_registry(module)


class _RegistryFinder(importlib.abc.MetaPathFinder):
    """Finds Keras' registry module as usual, with `_WrappingLoader` as its loader."""

    def find_spec(self, fullname, path, target=None):
        if fullname != REGISTRY_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _WrappingLoader(spec.loader)
        return spec


def install_keras_registry():
    """Makes every class of `KERAS_CLASSES` findable by Keras (imports no Keras itself)."""
    if REGISTRY_MODULE in sys.modules:
        _wrap_registry(sys.modules[REGISTRY_MODULE])
    elif not any(isinstance(finder, _RegistryFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegistryFinder())
