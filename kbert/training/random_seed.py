"""Seeding every random generator a run uses, without importing TensorFlow needlessly.

`keras.utils.set_random_seed` also seeds TensorFlow whenever it is installed, and to
find out it imports it: ~0.4 s of one C call (loading TensorFlow's shared library)
that holds the GIL, and ~800 MB. Under the desktop app that call runs in a worker
and froze the window for as long (the longest stall while fine-tuning on JAX). kbert
never uses TensorFlow's random ops on the other backends (its datasets are NumPy
there), so there it seeds what Keras seeds through public calls only: Python's
`random` (from which every `keras.random.SeedGenerator` made without a seed draws its
seed, Dropout's included), NumPy and, on PyTorch, torch. Keras' own global generator
(the one behind `keras.random` calls given no seed at all, which kbert never makes and
which JAX refuses inside a compiled step) has no public door: use
`keras.utils.set_random_seed` where such calls matter.
"""

import random
import sys

import keras
import numpy as np


def set_random_seed(seed):
    """Seeds Python's `random`, NumPy and the backend (PyTorch, or TensorFlow where it is
    the backend or already imported, then through `keras.utils.set_random_seed`).

    Models and `keras.random.SeedGenerator`s built after it, dropout included, draw the
    same numbers as after `keras.utils.set_random_seed(seed)`.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"`seed` must be an integer. Received: seed={seed!r}")
    if keras.backend.backend() == "tensorflow" or "tensorflow" in sys.modules:
        keras.utils.set_random_seed(seed)
        return
    random.seed(seed)
    np.random.seed(seed)
    if keras.backend.backend() == "torch":
        import torch

        torch.manual_seed(seed)
