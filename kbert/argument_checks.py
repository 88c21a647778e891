"""Checks of user-given arguments shared across kbert's packages (no Keras, no kbert imports).

Each raises `ValueError` in kbert's form: "`name` must be ... Received: name=value".
"""

import numpy as np


def check_positive_int(name, value):
    """`value` as an int; raises unless it is an integer >= 1 (bools are not integers)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")
    return int(value)
