"""Command-line options made from a config dataclass's fields, and the config made back.

Each field declares its default and help once (`kbert.training.settings.setting`); an
option's destination is the field's name, whatever its flag, so the parsed arguments
map onto the config field by field.
"""

import argparse
import dataclasses
import re

# The namespace attribute that maps each config field with an option to its flag.
OPTION_FLAGS = "option_flags"
_FIELD_IN_MESSAGE = re.compile(r"`(\w+)`")


def add_config_arguments(group, config_class, fields=None):
    """Adds one option per field of `config_class` (those in `fields`, default all) to
    `group` (a parser or an argument group), with the field's default and help.

    The parsed arguments also map each such field to its flag (`OPTION_FLAGS`), for
    `name_flags`.
    """
    flags = dict(group.get_default(OPTION_FLAGS) or {})
    for field in _selected_fields(config_class, fields):
        action = group.add_argument(_flag(field), dest=field.name, **_option(field))
        flags[field.name] = action.option_strings[0]
    group.set_defaults(**{OPTION_FLAGS: flags})


def name_flags(message, args):
    """`message` with the flag beside each config field it names in backticks, as the
    settings' errors do: "`warmup_steps` must not exceed `steps`" becomes
    "`warmup_steps` (--warmup-steps) must not exceed `steps` (--steps)"."""
    flags = getattr(args, OPTION_FLAGS, None) or {}

    def flagged(match):
        flag = flags.get(match.group(1))
        return match.group(0) if flag is None else f"{match.group(0)} ({flag})"

    return _FIELD_IN_MESSAGE.sub(flagged, message)


def config_from_arguments(config_class, args, base=None, **changes):
    """`config_class` from the parsed `args`: every field that has an option, starting
    from `base` (default: the class's defaults), then `changes` on top."""
    values = {} if base is None else dataclasses.asdict(base)
    for field in dataclasses.fields(config_class):
        if hasattr(args, field.name):
            value = getattr(args, field.name)
            if field.metadata.get("zero_is_none") and value == 0:
                value = None
            values[field.name] = value
    values.update(changes)
    return config_class(**values)


def _selected_fields(config_class, names):
    fields = {field.name: field for field in dataclasses.fields(config_class)}
    if names is None:
        return list(fields.values())
    unknown = [name for name in names if name not in fields]
    if unknown:
        raise ValueError(
            f"{config_class.__name__} has no field {unknown[0]!r}; its fields are {list(fields)}."
        )
    return [fields[name] for name in names]


def _flag(field):
    return field.metadata.get("flag", "--" + field.name.replace("_", "-"))


def _option(field):
    """The `add_argument` keywords of `field`: action or type, metavar, choices, help."""
    metadata = field.metadata
    # argparse formats help with %: a literal one is doubled.
    help_text = metadata.get("help", "").rstrip(".").replace("%", "%%")
    if field.type in (bool, "bool"):
        if field.default is True:
            return {"action": argparse.BooleanOptionalAction, "default": True, "help": help_text}
        return {"action": "store_true", "help": help_text}
    kind = {"int": int, "float": float, "str": str}.get(field.type, field.type)
    option = {"type": kind, "default": field.default}
    if "choices" in metadata:
        option["choices"] = tuple(metadata["choices"])
    else:
        option["metavar"] = metadata.get("metavar", "N" if kind is int else "X")
    shown = metadata.get("none") if field.default is None else _format_default(field.default)
    option["help"] = f"{help_text} (default: {shown})" if shown else help_text
    return option


def _format_default(value):
    """`5e-5`, not `5e-05`: the way a user types it."""
    return str(value).replace("e-0", "e-").replace("e+0", "e+")
