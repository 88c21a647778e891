"""Checks of user-given arguments shared across kbert's packages (no Keras, no kbert imports).

Each raises `ValueError` in kbert's form: "`name` must be ... Received: name=value".
"""

import numpy as np


def check_positive_int(name, value):
    """`value` as an int; raises unless it is an integer >= 1 (bools are not integers)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")
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


def check_text(name, text):
    """Raises `ValueError` unless `text` is a string."""
    if not isinstance(text, str):
        raise ValueError(
            f"`{name}` must be a string. Received: {name}={text!r} of type "
            f"{type(text).__name__}"
        )


def check_texts(name, texts):
    """`texts` as a list; raises `ValueError` unless it is a sequence of strings."""
    if isinstance(texts, (str, bytes)) or not hasattr(texts, "__iter__"):
        raise ValueError(
            f"`{name}` must be a list of strings. Received: {name}={texts!r} of "
            f"type {type(texts).__name__}"
        )
    texts = list(texts)
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(
                f"`{name}` must be a list of strings. Received: {name}[{index}]="
                f"{text!r} of type {type(text).__name__}"
            )
    return texts
