"""Seeding every random generator a run uses, without importing TensorFlow needlessly.

`keras.utils.set_random_seed` also seeds TensorFlow whenever it is installed, and to
find out it imports it: ~0.4 s of one C call (loading TensorFlow's shared library)
that holds the GIL, and ~800 MB. Under the desktop app that call runs in a worker
and froze the window for as long (the longest stall while fine-tuning on JAX). kbert
never uses TensorFlow's random ops on the other backends (its datasets are NumPy
there), so TensorFlow is seeded only where it is the backend or already imported.
"""

import sys

import keras


class _TensorFlowNotLoaded:
    """Stands in for Keras' lazy `tensorflow` module: "not available", nothing imported."""

    available = False


def set_random_seed(seed):
    """Seeds Python's `random`, NumPy, Keras' global seed generator and the backend.

    The same as `keras.utils.set_random_seed(seed)` except that TensorFlow is seeded
    only when it is the Keras backend or has been imported already.
    """
    if keras.backend.backend() == "tensorflow" or "tensorflow" in sys.modules:
        keras.utils.set_random_seed(seed)
        return
    try:
        from keras.src.utils import rng_utils
    except ImportError:  # a Keras laid out differently: seed as Keras does
        keras.utils.set_random_seed(seed)
        return
    lazy_tensorflow = getattr(rng_utils, "tf", None)
    if lazy_tensorflow is None:
        keras.utils.set_random_seed(seed)
        return
    rng_utils.tf = _TensorFlowNotLoaded()
    try:
        keras.utils.set_random_seed(seed)
    finally:
        rng_utils.tf = lazy_tensorflow
