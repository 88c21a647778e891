"""Checks of user-given arguments shared across kbert's packages (no Keras, no kbert imports).

Each raises `ValueError` in kbert's form: "`name` must be ... Received: name=value".
A value a user handed in is shown by `describe_value`, which never recurses into it (a
list nested 10,000 deep is "a list of 1 item", not a RecursionError) and never prints
more than a few dozen characters of it.
"""

import re

import numpy as np

# UTF-16 surrogate code points: a Python string may hold one alone (from
# "surrogateescape" decoding, say), but no text encoding can, nor the Rust tokenizer.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# The characters of a string or number shown in a message.
_SHOWN_CHARACTERS = 60


def check_positive_int(name, value, maximum=None):
    """`value` as an int; raises unless it is an integer >= 1 (bools are not integers)
    and, when `maximum` is given, at most `maximum`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"`{name}` must be at most {maximum}. Received: {name}={value!r}")
    return int(value)


def check_integer(name, value, minimum):
    """`value` as an int; raises unless it is an integer (not a bool) >= `minimum`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}. Received: {name}={value!r}")
    return int(value)


def check_fraction(name, value, allow_zero):
    """Raises `ValueError` unless `value` is a number in [0, 1] (or (0, 1])."""
    is_number = not isinstance(value, bool) and isinstance(value, (int, float, np.floating))
    if not is_number or not (0 <= value <= 1 if allow_zero else 0 < value <= 1):
        interval = "[0, 1]" if allow_zero else "(0, 1]"
        raise ValueError(f"`{name}` must be a number in {interval}. Received: {name}={value!r}")


def check_bool(name, value):
    """Raises `ValueError` unless `value` is True or False."""
    if not isinstance(value, bool):
        raise ValueError(f"`{name}` must be True or False. Received: {name}={value!r}")


def describe_value(value):
    """A user's value for a message: a short repr of a string or a scalar, else its kind.

    Containers are described by their type and size only, so that a hostile value
    (deeply nested, huge) cannot make the message itself fail or flood a terminal.

    Examples:

    >>> describe_value("cat"), describe_value(3)
    ("'cat'", '3')
    >>> describe_value([[["x"]]])
    'a list of 1 item'
    """
    if isinstance(value, str):
        if len(value) <= _SHOWN_CHARACTERS:
            return repr(value)
        return f"{value[:_SHOWN_CHARACTERS - 1]!r}... (a string of {len(value)} characters)"
    if _is_scalar(value):
        shown = repr(value.item() if isinstance(value, np.generic) else value)
        return shown if len(shown) <= _SHOWN_CHARACTERS else f"{shown[:_SHOWN_CHARACTERS]}..."
    kind = type(value).__name__
    article = "an" if kind[:1].lower() in "aeiou" else "a"
    size = _size(value)
    if size is None:
        return f"{article} {kind}"
    return f"{article} {kind} of {size} item{'' if size == 1 else 's'}"


def describe_kind(value):
    """`describe_value` with the type named: "3 of type int", "a list of 2 items"."""
    if isinstance(value, str) or _is_scalar(value):
        return f"{describe_value(value)} of type {type(value).__name__}"
    return describe_value(value)


def _is_scalar(value):
    return value is None or isinstance(value, (bool, int, float, complex, bytes, np.generic))


def _size(value):
    """`len(value)` for a sized container, None for anything else (or a failing len)."""
    try:
        return len(value)
    except Exception:  # noqa: BLE001 - a user's object may raise anything from len()
        return None


def text_problem(value):
    """Why `value` cannot be a text (None when it can): not a string, or a string
    holding a lone UTF-16 surrogate, which no encoding (nor the tokenizer) takes."""
    if not isinstance(value, str):
        return f"expected a string, found {describe_kind(value)}"
    surrogate = _LONE_SURROGATE.search(value)
    if surrogate is not None:
        return (
            f"a lone surrogate U+{ord(surrogate.group()):04X} at character {surrogate.start()} "
            "is not text (decode the bytes with errors='replace')"
        )
    return None


def check_text(name, text):
    """Raises `ValueError` unless `text` is a string that `text_problem` accepts."""
    if not isinstance(text, str):
        raise ValueError(f"`{name}` must be a string. Received: {name}={describe_kind(text)}")
    problem = text_problem(text)
    if problem is not None:
        raise ValueError(f"`{name}` must be a string of text. Received: {name}: {problem}.")


def check_texts(name, texts):
    """`texts` as a list; raises `ValueError` unless it is a sequence of strings."""
    if isinstance(texts, (str, bytes)) or not hasattr(texts, "__iter__"):
        raise ValueError(
            f"`{name}` must be a list of strings. Received: {name}={describe_kind(texts)}"
        )
    texts = list(texts)
    for index, text in enumerate(texts):
        check_text(f"{name}[{index}]", text)
    return texts
