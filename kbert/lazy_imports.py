"""Package `__init__`s that import their modules on first use of a name.

`import kbert.finetuning` (or any package using this) then costs nothing: Keras and the
backends load only when a name that needs them is used, so `kbert --help`, the task
specs and `BertConfig` stay instant and Keras-free.
"""

import importlib


def names_by_module(modules):
    """`{name: module}` from `{module: (name, ...)}`, the way a package lists its names.

    Raises:
        ValueError: if a name is listed under two modules.
    """
    public_names = {}
    for module, names in modules.items():
        for name in names:
            if name in public_names:
                raise ValueError(f"{name!r} is listed under {public_names[name]} and {module}")
            public_names[name] = module
    return public_names


def lazy_attributes(package, public_names):
    """`(__getattr__, __dir__)` for a package whose names live in its modules.

    Args:
        package: the package's `__name__`.
        public_names: `name -> module` of every public name.

    Example (in a package's `__init__.py`):

    >>> __getattr__, __dir__ = lazy_attributes(__name__, {"FineTuner": "kbert.finetuning.fine_tuner"})
    """

    def __getattr__(name):
        if name in public_names:
            try:
                module = importlib.import_module(public_names[name])
            except ModuleNotFoundError as error:
                # The backend Keras was told to use is an extra that is not installed.
                from kbert.optional_packages import missing_extra_message  # only on failure

                message = missing_extra_message(error)
                if message is None:
                    raise
                raise ModuleNotFoundError(message, name=error.name) from error
            return getattr(module, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(public_names)

    return __getattr__, __dir__
