"""kbert.training.set_random_seed: Keras' seeding, without importing TensorFlow elsewhere."""

import json
import os
import subprocess
import sys

import keras
import pytest
from process_helpers import on_the_process_pass

only_in_the_process_pass = on_the_process_pass("starts processes with their own backends")

SCRIPT = r"""
import json, random, sys
import keras
import numpy as np
from kbert.training.random_seed import set_random_seed

def draws():
    generator = keras.random.SeedGenerator()  # its seed drawn from Python's random
    dropout = keras.layers.Dropout(0.5)
    return [
        float(keras.ops.convert_to_numpy(keras.random.uniform((3,), seed=generator))[0]),
        keras.ops.convert_to_numpy(dropout(keras.ops.ones((8,)), training=True)).tolist(),
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


@only_in_the_process_pass
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
    assert 0 < result["first"][1].count(0.0) < 8  # the dropout draw is a real one


def test_the_seed_is_checked():
    from kbert.training.random_seed import set_random_seed

    with pytest.raises(ValueError, match="seed"):
        set_random_seed("7")


def test_seeds_tensorflow_when_it_is_loaded():
    tensorflow = pytest.importorskip("tensorflow")
    from kbert.training.random_seed import set_random_seed

    set_random_seed(11)
    first = float(tensorflow.random.uniform(()))
    set_random_seed(11)
    assert float(tensorflow.random.uniform(())) == first


FINE_TUNE_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from fine_tuning_data import classification_examples, make_tiny_preset
from kbert.finetuning import FineTuner, FineTuningConfig

preset = make_tiny_preset(sys.argv[2] + "/preset", hidden_size=32, num_layers=1,
                          num_heads=2, intermediate_size=48, max_positions=16)
config = FineTuningConfig(epochs=1, batch_size=4, seed=3, max_length=16)
result = FineTuner("classification", preset, sys.argv[2] + "/run", config).run(
    classification_examples(8, seed=1))
print(json.dumps({"status": result.status, "tensorflow": "tensorflow" in sys.modules}))
"""


@only_in_the_process_pass
@pytest.mark.slow
def test_fine_tuning_on_jax_never_imports_tensorflow(tmp_path):
    # TensorFlow's import (~0.4 s holding the GIL, ~800 MB) froze the app's window when
    # the seeding of the first fine-tuning run pulled it in on JAX.
    tests = os.path.dirname(os.path.abspath(__file__))
    environment = dict(os.environ, KERAS_BACKEND="jax")
    completed = subprocess.run(
        [sys.executable, "-c", FINE_TUNE_SCRIPT, tests, str(tmp_path)], env=environment,
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert result == {"status": "completed", "tensorflow": False}
