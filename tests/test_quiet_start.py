"""Quiet by default on a CPU: no GPU hints, no TensorFlow where it is not the backend.

Only a fresh process shows what a user sees (what is imported, what reaches stderr), so
each test runs one, with the environment a user has: no TF_CPP_MIN_LOG_LEVEL (the test
suite sets one) and, for the command, no KERAS_BACKEND (it picks JAX).
"""

import os
import subprocess
import sys

import pytest
from process_helpers import on_the_process_pass

TEXT = "Paris is the [MASK] of France."

# A script as a user writes it: import kbert, fill a mask with the bundled model.
FILL_MASK_SCRIPT = f"""
import sys
import kbert

model = kbert.BertMaskedLM.from_preset("demo")
result = model.fill_mask({TEXT!r})
assert result.masks[0].candidates, result
print("tensorflow imported:", "tensorflow" in sys.modules)
"""

only_on_the_process_pass = on_the_process_pass(
    "runs its own processes whatever the test's backend"
)


def _user_environment(tmp_path, **variables):
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("KERAS_BACKEND", "TF_CPP_MIN_LOG_LEVEL", "JAX_COMPILATION_CACHE_DIR")
    }
    environment.update(KBERT_CACHE=str(tmp_path / "cache"), **variables)
    return environment


@only_on_the_process_pass
@pytest.mark.slow
def test_kbert_fill_mask_on_a_cpu_prints_nothing_on_stderr(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "kbert.cli", "fill-mask", "--model", "demo", TEXT],
        env=_user_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "[MASK] at 13:19" in completed.stdout, completed.stdout
    assert completed.stderr == "", completed.stderr


@only_on_the_process_pass
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_a_script_on_jax_or_torch_never_imports_tensorflow(tmp_path, backend):
    completed = subprocess.run(
        [sys.executable, "-c", FILL_MASK_SCRIPT],
        env=_user_environment(tmp_path, KERAS_BACKEND=backend),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "tensorflow imported: False" in completed.stdout, completed.stdout
    assert completed.stderr == "", completed.stderr


@only_on_the_process_pass
def test_importing_kbert_keeps_tensorflow_logging_to_errors_unless_told_otherwise(tmp_path):
    script = "import os, kbert; print(os.environ['TF_CPP_MIN_LOG_LEVEL'])"
    levels = [
        subprocess.run(
            [sys.executable, "-c", script],
            env=_user_environment(tmp_path, **variables),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout.strip()
        for variables in ({}, {"TF_CPP_MIN_LOG_LEVEL": "0"})
    ]
    assert levels == ["2", "0"]
