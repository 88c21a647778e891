"""The `kbert` command picks JAX and a compilation cache where the user set neither.

`kbert.cli.choose_backend_defaults` sets them before Keras is imported, so only a fresh
process shows it: the test runs the command in one, with a keras.json that names
TensorFlow and without KERAS_BACKEND or JAX_COMPILATION_CACHE_DIR.
"""

import os
import subprocess
import sys

import keras
import pytest
from process_helpers import on_the_process_pass
from inference_helpers import VOCABULARY
from inference_helpers import make_tokenizer
from model_helpers import TINY

from kbert.models import BertBackbone
from kbert.models import BertPretrainer

TEXT = "the cat sat on the [MASK] ."


@pytest.fixture
def preset(tmp_path):
    """A tiny random pretrainer with its tokenizer, as `kbert fill-mask --model` reads it."""
    folder = tmp_path / "preset"
    backbone = BertBackbone(**dict(TINY, vocabulary_size=len(VOCABULARY)))
    BertPretrainer(backbone).save_to_preset(folder, tokenizer=make_tokenizer(tmp_path))
    return str(folder)


@on_the_process_pass("the command chooses its own backend, whatever the test's")
@pytest.mark.slow
def test_the_kbert_command_runs_on_jax_and_keeps_its_programs(preset, tmp_path):
    keras_home = tmp_path / "keras_home"
    keras_home.mkdir()
    (keras_home / "keras.json").write_text('{"backend": "tensorflow"}')
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("KERAS_BACKEND", "JAX_COMPILATION_CACHE_DIR")
    }
    environment.update(KERAS_HOME=str(keras_home), KBERT_CACHE=str(tmp_path / "cache"))
    completed = subprocess.run(
        [sys.executable, "-m", "kbert.cli", "fill-mask", "--model", preset, TEXT],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    # JAX ran (keras.json's TensorFlow did not) and kept its compiled programs.
    assert any((tmp_path / "cache" / "jax-compilation-cache").iterdir())
