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
    "tf2onnx": ("tf2onnx (ONNX export)", "onnx"),
}


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
