import contextlib
import contextvars

import keras
import numpy as np

from kbert.architecture.bert_layout import truncated_normal

# True inside `skipped_random_initialization()`; a context variable, so that a model
# loaded in one thread (the desktop app's workers) does not affect another.
_SKIPPING_RANDOM_VALUES = contextvars.ContextVar("kbert_skipping_random_values", default=False)


@contextlib.contextmanager
def skipped_random_initialization():
    """Builds models whose every weight is about to be assigned, without drawing them.

    Inside this block `HostTruncatedNormal` returns zeros. For loading a preset, whose
    weights replace every initial value at once: drawing BERT-base's 110 million
    random numbers took 1.9 s of a 3.4 s load on a two-core CPU.
    A weight that is then not assigned stays zero, so use it only where every weight
    is checked to come from the file.
    """
    token = _SKIPPING_RANDOM_VALUES.set(True)
    try:
        yield
    finally:
        _SKIPPING_RANDOM_VALUES.reset(token)


@keras.saving.register_keras_serializable(package="kbert")
class HostTruncatedNormal(keras.initializers.Initializer):
    """BERT's weight initialiser, drawn on the host with NumPy.

    The same distribution as `keras.initializers.TruncatedNormal` (a normal
    distribution with mean 0 and standard deviation `stddev`, redrawn beyond two
    standard deviations), but computed in NumPy. On JAX, Keras' initialiser runs
    eagerly and XLA compiles its random-number program once per weight shape: a
    BERT-tiny took three seconds to build on a two-core CPU, most of a cold start,
    before a preset overwrote every one of those weights. Drawing on the host
    compiles nothing, and the same seed gives the same weights on every backend.

    Without a `seed`, each call draws from NumPy's global generator, which
    `keras.utils.set_random_seed` seeds: models built after it are reproducible, as
    with Keras' own initialisers.

    Args:
        stddev: standard deviation before truncation (BERT's `initializer_range`).
        seed: optional int; the same seed gives the same values at every call.

    Example:

    >>> initializer = HostTruncatedNormal(stddev=0.02, seed=1)
    >>> values = initializer((768, 768))
    >>> bool(abs(values).max() <= 0.04)
    True
    """

    def __init__(self, stddev=0.02, seed=None):
        if not isinstance(stddev, (int, float)) or isinstance(stddev, bool) or stddev <= 0:
            raise ValueError(f"`stddev` must be a positive number. Received: stddev={stddev!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"`seed` must be None or an int. Received: seed={seed!r}")
        self.stddev = float(stddev)
        self.seed = seed

    def __call__(self, shape, dtype=None):
        dtype = keras.backend.standardize_dtype(dtype or keras.config.floatx())
        if _SKIPPING_RANDOM_VALUES.get():
            return _as_dtype(np.zeros(shape, dtype=np.float32), dtype)
        if self.seed is None:
            generator = np.random.default_rng(np.random.randint(0, 2**31 - 1))
        else:
            generator = np.random.default_rng(self.seed)
        return _as_dtype(truncated_normal(shape, self.stddev, generator), dtype)

    def get_config(self):
        return {"stddev": self.stddev, "seed": self.seed}


def _as_dtype(values, dtype):
    """float32 NumPy values as `dtype`: unchanged for float32, else cast by the backend
    (NumPy has no bfloat16)."""
    if dtype == "float32":
        return values
    return keras.ops.cast(values, dtype)
