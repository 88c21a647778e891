"""Which pip extra installs each optional package, and the message that says so.

kbert's distribution on PyPI is `kbert-keras` (`DISTRIBUTION`; the import name is `kbert`:
PyPI's `kbert` is another project). `pip install kbert-keras` brings Keras, JAX (the
default backend) and what the core uses. The other backends and the desktop app are
extras: `kbert-keras[tensorflow]`, `[torch]`, `[gui]`, `[search]` (Optuna, for `kbert
finetune --search`), `[onnx]` (ONNX export and ONNX Runtime inference), or `[all]` for
every one. Code that finds one missing (the command line, the lazy package attributes, the
Google checkpoint reader) turns the bare `ModuleNotFoundError` into a message naming the
extra (`install_command`).
"""

import contextlib
import os
import re
import sys
import tempfile

# The name pip installs kbert by (pyproject's `[project] name`); tests check they agree.
DISTRIBUTION = "kbert-keras"
# PyTorch's CPU wheel index, when the user names one (see pytorch.org's install selector):
# without it pip resolves `torch` from the default index, a CUDA build on Linux (GBs).
TORCH_INDEX_VARIABLE = "KBERT_TORCH_INDEX_URL"

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
    return f"{what} is not installed (no module named {name!r}): {install_command(extra)}"


def install_command(extra=None):
    """The pip command that installs kbert with `extra` (None: the light install).

    PyTorch's comes with `--extra-index-url` when `KBERT_TORCH_INDEX_URL` names its CPU
    wheel index (kbert never writes an index's address itself).
    """
    import os

    if extra is None:
        return f"pip install {DISTRIBUTION}"
    command = f'pip install "{DISTRIBUTION}[{extra}]"'
    index = os.environ.get(TORCH_INDEX_VARIABLE, "").strip()
    if extra in ("torch", "all") and index:
        command += f" --extra-index-url {index}"
    return command


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
# kbert's backend where the user chose none (`choose_default_backend`); Keras' own.
DEFAULT_BACKEND = "jax"
KERAS_DEFAULT_BACKEND = "tensorflow"


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


def chosen_backend():
    """The backend the user chose, or None: `KERAS_BACKEND`, else a `keras.json` naming
    one other than TensorFlow.

    Keras writes `keras.json` with its own default (TensorFlow) on its first run, so a
    keras.json naming TensorFlow says nothing about the user; `KERAS_BACKEND=tensorflow`
    does.
    """
    import os

    named = os.environ.get("KERAS_BACKEND") or None
    if named is None and _keras_json_backend() != KERAS_DEFAULT_BACKEND:
        named = _keras_json_backend()
    return named


def choose_default_backend():
    """Runs Keras on JAX where the user chose no backend, in Python as in `kbert`.

    Run by `import kbert`, before Keras loads: with no backend chosen (`chosen_backend`),
    `KERAS_BACKEND=jax`; JAX starts fastest (importing TensorFlow alone takes seconds)
    and the light install (`pip install kbert-keras`) has no other. A backend chosen in
    keras.json that is not installed gives way to JAX too. Finds modules without
    importing them (milliseconds).
    """
    import logging
    import os
    import sys

    if "keras" in sys.modules or os.environ.get("KERAS_BACKEND") or not installed("jax"):
        return
    chosen = chosen_backend()
    if chosen is not None and (chosen not in BACKEND_MODULES or installed(BACKEND_MODULES[chosen])):
        return
    os.environ["KERAS_BACKEND"] = DEFAULT_BACKEND
    if chosen is not None:  # DEBUG: a light install lacks the other backends by design
        logging.getLogger("kbert").debug(
            "keras.json's backend %r is not installed; running on JAX (set KERAS_BACKEND "
            "to choose).", chosen,
        )


def require_backend():
    """Imports Keras' configured backend; when it is missing, says which extra to install.

    Run by the packages that import Keras (`kbert.layers`, `kbert.models`, ...) before
    they do, so that `KERAS_BACKEND=torch` without PyTorch is one sentence naming
    the `torch` extra, not an ImportError from deep inside Keras.

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


# --- TensorFlow started by kbert itself ------------------------------------------------
# Where kbert imports TensorFlow on another backend (reading a Google checkpoint), its C++
# runtime writes 4-7 lines straight to file descriptor 2 while it starts: an absl note, a
# oneDNN note, "Could not find cuda drivers", CPU instruction sets and, at the first use
# of a device, "failed call to cuInit" marked E0000. Most come before TensorFlow reads
# `TF_CPP_MIN_LOG_LEVEL`, so only the descriptor itself can hold them back.
# TensorFlow's start-up lines (absl's prefix: severity, date, time, thread, file:line).
_START_UP_LINE = re.compile(
    r"^(WARNING: All log messages before absl::InitializeLog\(\) is called"
    r"|[IWE]\d{4} [\d:.]+\s+\d+ (port|cudart_stub|cpu_feature_guard|cuda_platform|cuda_dnn"
    r"|cuda_fft|cuda_blas|cuda_executor|gpu_device)\.cc:\d+\]"
    r"|To enable the following instructions:"
    r"|WARNING: TF_ENABLE_ONEDNN_OPTS)"
)


def is_start_up_line(line):
    """Whether `line` is one of TensorFlow's start-up lines."""
    return bool(_START_UP_LINE.match(line))


@contextlib.contextmanager
def start_up_lines_held_back():
    """Within: what is written to file descriptor 2 is kept; after: written back, less
    TensorFlow's start-up lines (everything when the block raised)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        failed = True
        try:
            yield
            failed = False
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            lines = held.read().decode("utf-8", "replace").splitlines(keepends=True)
            kept = [line for line in lines if failed or not is_start_up_line(line)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()


def tensorflow_quietly(purpose):
    """Imports TensorFlow and starts its devices without their start-up lines; returns it.

    Args:
        purpose: what needs TensorFlow, for the message naming the extra when it is missing.

    Raises:
        ModuleNotFoundError: naming `purpose` and the extra that installs TensorFlow.
    """
    if sys.modules.get("tensorflow") is not None:  # started already: nothing to hold back
        return sys.modules["tensorflow"]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    with start_up_lines_held_back():
        tf = require_extra("tensorflow", purpose)
        tf.config.list_physical_devices()  # cuInit, within
    return tf
