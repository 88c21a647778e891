"""kbert: BERT for Keras 3 on JAX, TensorFlow and PyTorch.

The public names are imported lazily so that `import kbert` (and the `kbert` command's
`--help`) stays fast; Keras and the backend load on first use of a model class.

TensorFlow's C++ logging is kept to errors (`TF_CPP_MIN_LOG_LEVEL=2`) when kbert is
what imports TensorFlow, unless the environment already sets the level: its start-up
INFO and WARNING lines are noise to a kbert user. On the JAX and PyTorch backends
kbert imports TensorFlow only where a task needs it (reading a Google TF checkpoint).

kbert runs Keras on JAX where the user chose no backend (`KERAS_BACKEND` unset and no
`~/.keras/keras.json` naming one other than Keras' default, TensorFlow), the same as the
`kbert` command: `import kbert` sets `KERAS_BACKEND=jax` before Keras loads
(`kbert.optional_packages.choose_default_backend`).

Every kbert Keras class is known to Keras by its registered name from `import kbert` on
(`kbert.keras_registry`), so `keras.saving.load_model("model.keras")` needs nothing else.
"""

import os
import sys

from kbert.keras_registry import KERAS_CLASSES
from kbert.keras_registry import install_keras_registry
from kbert.lazy_imports import lazy_attributes
from kbert.lazy_imports import names_by_module
from kbert.optional_packages import choose_default_backend

__version__ = "0.1.0"

if "tensorflow" not in sys.modules:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# `keras.saving.load_model` finds every kbert class without one being imported first.
install_keras_registry()
# JAX where the user chose no backend, as on the command line.
choose_default_backend()

# The public names: every registered model class (the backbone and the tasks), and these.
_PUBLIC_NAMES = names_by_module(
    {
        "kbert.architecture.bert_config": ("BertConfig",),
        "kbert.models.bert_task": ("BertTask",),
        "kbert.presets.model_source": ("resolve_preset",),
        "kbert.tokenizer.bert_tokenizer": ("BertTokenizer",),
    }
) | {name: module for name, module in KERAS_CLASSES.items() if module.startswith("kbert.models.")}

__all__ = sorted(_PUBLIC_NAMES) + ["__version__"]
__getattr__, __dir__ = lazy_attributes(__name__, _PUBLIC_NAMES)
