"""Which pip extra installs each optional package, and the message that says so.

`pip install kbert` brings Keras, JAX (the default backend) and what the core uses. The
other backends and the desktop app are extras: `kbert[tensorflow]`, `kbert[torch]`,
`kbert[gui]`, `kbert[search]` (Optuna, for `kbert finetune --search`), `kbert[onnx]` (ONNX export
and ONNX Runtime inference), or `kbert[all]` for every one. Code that finds one missing (the command
line, the lazy package attributes, the Google checkpoint reader) turns the bare
`ModuleNotFoundError` into a message naming the extra.
"""

# Top-level module -> (what it is, the extra that installs it).
EXTRAS = {
    "tensorflow": ("TensorFlow", "tensorflow"),
    "torch": ("PyTorch", "torch"),
    "PySide6": ("PySide6 (the desktop app)", "gui"),
    "shiboken6": ("PySide6 (the desktop app)", "gui"),
    "optuna": ("Optuna (the fine-tuning search)", "search"),
    "onnxruntime": ("ONNX Runtime", "onnx"),
    "onnx": ("ONNX", "onnx"),
}
# What ONNX export imports (`kbert.inference.onnx_export`), found without importing it.
ONNX_EXPORT_MODULES = ("onnx",)


def missing_extra_message(error):
    """The install hint for `error`, a ModuleNotFoundError of an optional package.

    Returns:
        One sentence naming the extra to install, or None when `error` is about any
        other module (a bug or a broken install, which keeps its own message).
    """
    name = (getattr(error, "name", None) or "").split(".")[0]
    if name not in EXTRAS:
        return None
    what, extra = EXTRAS[name]
    return f'{what} is not installed (no module named {name!r}): pip install "kbert[{extra}]"'


def require_extra(module, purpose):
    """Imports `module` and returns it; when it is missing, says which extra to install.

    Raises:
        ModuleNotFoundError: naming `purpose` and the extra.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        message = missing_extra_message(error)
        if message is None:
            raise
        raise ModuleNotFoundError(f"{purpose} needs {message}", name=error.name) from None


# Keras' backend -> the module it imports first.
BACKEND_MODULES = {"tensorflow": "tensorflow", "torch": "torch", "jax": "jax"}


def _keras_json_backend():
    """The "backend" of `keras.json` in `KERAS_HOME` (or ~/.keras), or None."""
    import json
    import os

    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    try:
        with open(os.path.join(home, "keras.json"), encoding="utf-8") as file:
            backend = json.load(file).get("backend")
    except (OSError, ValueError, AttributeError):
        return None
    return backend if isinstance(backend, str) else None


def configured_backend():
    """The backend Keras will load, read as Keras reads it, without importing Keras.

    `KERAS_BACKEND`, else the "backend" of `keras.json` in `KERAS_HOME` (or ~/.keras),
    else Keras' own default, TensorFlow. Once Keras is imported, its answer.
    """
    import os
    import sys

    if "keras" in sys.modules and hasattr(sys.modules["keras"], "config"):
        return sys.modules["keras"].config.backend()
    return os.environ.get("KERAS_BACKEND") or _keras_json_backend() or "tensorflow"


def installed(module):
    """Whether `module` can be imported, found without importing it (an error finding it,
    such as a broken parent package, counts as not installed)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def choose_default_backend():
    """Runs Keras on JAX when no backend is asked for and the implied one is missing.

    Keras falls back to TensorFlow (or to the backend it wrote into `keras.json` on its
    first run); a light install (`pip install kbert`) has JAX but not TensorFlow. Run by
    `import kbert`, before Keras loads: when `KERAS_BACKEND` is unset and the backend
    `keras.json` or Keras' default implies is not installed, `KERAS_BACKEND=jax`. A
    backend that is installed, or one asked for by `KERAS_BACKEND`, is left alone.
    Finds modules without importing them (milliseconds).
    """
    import logging
    import os
    import sys

    if "keras" in sys.modules or os.environ.get("KERAS_BACKEND"):
        return
    implied = _keras_json_backend() or "tensorflow"
    module = BACKEND_MODULES.get(implied)
    if module is None or installed(module) or not installed("jax"):
        return
    os.environ["KERAS_BACKEND"] = "jax"
    # DEBUG: a light install lacks TensorFlow by design; no command should say so.
    logging.getLogger("kbert").debug(
        "Keras' backend %r is not installed; running on JAX (set KERAS_BACKEND to choose).",
        implied,
    )


def require_backend():
    """Imports Keras' configured backend; when it is missing, says which extra to install.

    Run by the packages that import Keras (`kbert.layers`, `kbert.models`, ...) before
    they do, so that `KERAS_BACKEND=torch` without PyTorch is one sentence naming
    `kbert[torch]`, not an ImportError from deep inside Keras.

    Raises:
        ModuleNotFoundError: naming the backend, the extra and the way to another backend.
    """
    import importlib

    backend = configured_backend()
    module = BACKEND_MODULES.get(backend)
    if module is None:
        return  # Keras' own message names the backends it knows.
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as error:
        message = missing_extra_message(error)
        if message is None:
            raise
        raise ModuleNotFoundError(
            f"Keras' backend is {backend!r} (KERAS_BACKEND or keras.json), but {message}; "
            f"or run on JAX, which kbert always installs: KERAS_BACKEND=jax",
            name=error.name,
        ) from None
