"""`kbert` in a fresh process as the light install has it (`pip install kbert`: Keras and
JAX, none of the extras), whatever this environment holds.

The extras are hidden the two ways Python tells a package that is not installed: an
import raises ModuleNotFoundError (a finder ahead of every other one), and
`importlib.util.find_spec` answers None (what kbert asks before it imports an optional
package). Nothing is put in sys.modules, where other libraries look for them (SciPy
checks for a loaded torch); any one already there is removed.
"""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

# What `pip install kbert` does not bring (the extras' top-level modules).
EXTRA_MODULES = ("tensorflow", "torch", "onnxruntime", "onnx", "PySide6",
                 "shiboken6", "optuna")

_BLOCKER = """
import importlib.util
import sys

BLOCKED = set(%r)


class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


for loaded in [name for name in sys.modules if name.split(".")[0] in BLOCKED]:
    del sys.modules[loaded]
sys.meta_path.insert(0, NotInstalled())
_find_spec = importlib.util.find_spec


def find_spec(name, package=None):
    if name.split(".")[0] in BLOCKED:
        return None
    return _find_spec(name, package)


importlib.util.find_spec = find_spec
from kbert.cli import main

sys.exit(main(%r))
"""


def light_install_environment(tmp_path, keras_json_backend="tensorflow"):
    """The environment of a first run: KERAS_BACKEND unset, a keras.json naming
    `keras_json_backend` (Keras' own default) in a fresh KERAS_HOME, an empty kbert
    cache; all under `tmp_path`."""
    keras_home = tmp_path / "keras-home"
    keras_home.mkdir(exist_ok=True)
    (keras_home / "keras.json").write_text(f'{{"backend": "{keras_json_backend}"}}')
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("KERAS_BACKEND", "JAX_COMPILATION_CACHE_DIR")}
    environment.update(KERAS_HOME=str(keras_home), KBERT_CACHE=str(tmp_path / "kbert-cache"))
    return environment


def run_kbert_without(arguments, environment, blocked=EXTRA_MODULES, timeout=300):
    """`kbert ARGUMENTS` in a fresh process where `blocked` are not installed; the
    finished `subprocess.CompletedProcess` (text)."""
    script = _BLOCKER % (list(blocked), list(arguments))
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=timeout)
