"""A setting declared once: a config dataclass field that carries its own help.

The command line (`kbert.commands.config_arguments`), the app's forms and the class's
docstring all read the field's metadata, so a default or a description changes in one
place (the idea of transformers' `HfArgumentParser`). Plain data: no Keras import.

Metadata keys: "help" (one sentence or two, readable in `--help`, a tooltip and the
docstring); where the command line differs from what the field implies, "flag" (the
option, default `--field-name`), "metavar", "choices", "none" (what None means, shown
as the default) and "zero_is_none" (the option takes 0 for None, e.g. no clipping).
"""

import dataclasses
import inspect
import textwrap

CLI_KEYS = ("flag", "metavar", "choices", "none", "zero_is_none")


def setting(default, help, **cli):
    """A `dataclasses.field` with `default` whose metadata holds `help` and `cli`."""
    unknown = sorted(set(cli) - set(CLI_KEYS))
    if unknown:
        raise ValueError(f"Unknown setting metadata {unknown}; the keys are {CLI_KEYS}.")
    if not isinstance(help, str) or not help.strip():
        raise ValueError(f"A setting needs a help text. Received: help={help!r}")
    return dataclasses.field(default=default, metadata={"help": help, **cli})


def setting_help(config_class):
    """`{field name: help text}` of a config dataclass, in field order, with what None means."""
    texts = {}
    for field in dataclasses.fields(config_class):
        text = field.metadata.get("help", "")
        if field.metadata.get("none"):
            text += f" None: {field.metadata['none']}."
        texts[field.name] = text
    return texts


def document_settings(config_class):
    """Class decorator: appends an "Args:" section made of the fields' help to the docstring."""
    lines = ["", "Args:"]
    for name, text in setting_help(config_class).items():
        lines.extend(
            textwrap.wrap(
                f"{name}: {text}", width=88, initial_indent="    ", subsequent_indent="        "
            )
        )
    summary = inspect.cleandoc(config_class.__doc__ or "")
    config_class.__doc__ = summary + "\n" + "\n".join(lines) + "\n"
    return config_class
