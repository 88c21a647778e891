"""kbert.training.set_random_seed: Keras' seeding, without importing TensorFlow elsewhere."""

import json
import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import json, random, sys
import keras
import numpy as np
from kbert.training.random_seed import set_random_seed

def draws():
    return [
        float(keras.ops.convert_to_numpy(keras.random.uniform((3,)))[0]),
        random.random(),
        float(np.random.rand()),
    ]

set_random_seed(5)
first = draws()
tensorflow_after_kbert = "tensorflow" in sys.modules
set_random_seed(5)
again = draws()
keras.utils.set_random_seed(5)
by_keras = draws()
print(json.dumps({"first": first, "again": again, "by_keras": by_keras,
                  "tensorflow_after_kbert": tensorflow_after_kbert}))
"""


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_seeds_as_keras_does_without_importing_tensorflow(backend):
    environment = dict(os.environ, KERAS_BACKEND=backend)
    completed = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=environment, capture_output=True, text=True,
        timeout=300, check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert result["tensorflow_after_kbert"] is False
    assert result["first"] == result["again"]
    assert result["first"] == result["by_keras"]


def test_seeds_tensorflow_when_it_is_loaded():
    tensorflow = pytest.importorskip("tensorflow")
    from kbert.training.random_seed import set_random_seed

    set_random_seed(11)
    first = float(tensorflow.random.uniform(()))
    set_random_seed(11)
    assert float(tensorflow.random.uniform(())) == first
