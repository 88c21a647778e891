"""The light install: `pip install kbert` is Keras and JAX; the rest are extras that the
errors name.

A package that is not installed is simulated the way Python itself records one that
failed to import: `sys.modules[name] = None` makes `import name` raise
ModuleNotFoundError. The backend tests run in a fresh process, since Keras picks its
backend once, at import.
"""

import os
import pathlib
import subprocess
import sys

import keras
import pytest

from kbert.optional_packages import missing_extra_message
from kbert.optional_packages import require_extra

ROOT = pathlib.Path(__file__).resolve().parents[1]

only_on_the_jax_pass = pytest.mark.skipif(
    keras.config.backend() != "jax",
    reason="runs its own processes whatever the test's backend; the JAX pass runs it",
)


def test_the_missing_package_names_its_extra():
    assert missing_extra_message(ModuleNotFoundError(name="torch")).endswith(
        'pip install "kbert[torch]"'
    )
    assert 'pip install "kbert[gui]"' in missing_extra_message(
        ModuleNotFoundError(name="PySide6.QtWidgets")
    )
    # Any other module is not an extra: its own message stays.
    assert missing_extra_message(ModuleNotFoundError(name="numpy")) is None
    assert missing_extra_message(ImportError("cannot import name 'x'")) is None


def test_reading_a_google_checkpoint_without_tensorflow_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    with pytest.raises(ModuleNotFoundError) as error:
        require_extra("tensorflow", "Reading a Google TensorFlow checkpoint")
    message = str(error.value)
    assert message.startswith("Reading a Google TensorFlow checkpoint needs TensorFlow")
    assert message.endswith('pip install "kbert[tensorflow]"')


def _without(package, backend, code):
    script = f"import sys, os\nsys.modules[{package!r}] = None\n{code}"
    environment = dict(os.environ, KERAS_BACKEND=backend)
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


@only_on_the_jax_pass
def test_the_command_on_a_backend_that_is_not_installed_names_the_extra():
    completed = _without(
        "torch",
        "torch",
        "from kbert.cli import main\nsys.exit(main(['fill-mask', '--model', 'demo', 'a [MASK]']))",
    )
    assert completed.returncode == 1, completed.stderr[-3000:]
    assert completed.stderr.count("\n") == 1, completed.stderr
    assert completed.stderr.startswith("kbert fill-mask: error: PyTorch is not installed")
    assert completed.stderr.strip().endswith('pip install "kbert[torch]"')


@only_on_the_jax_pass
def test_the_library_on_a_backend_that_is_not_installed_names_the_extra():
    completed = _without(
        "tensorflow",
        "tensorflow",
        "import kbert\n"
        "try:\n"
        "    kbert.BertMaskedLM\n"
        "except ModuleNotFoundError as error:\n"
        "    print(error)\n",
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip().endswith('pip install "kbert[tensorflow]"'), completed.stdout


def test_the_core_install_is_keras_and_jax_and_the_extras_add_the_rest():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(requirements):
        return {requirement.split(">")[0].split("<")[0].split("[")[0].strip().lower()
                for requirement in requirements}

    core = names(project["dependencies"])
    assert {"keras", "jax"} <= core
    assert not core & {"tensorflow", "torch", "pyside6", "keras-hub", "keras-nlp"}, core
    extras = project["optional-dependencies"]
    assert names(extras["tensorflow"]) == {"tensorflow"}
    assert names(extras["torch"]) == {"torch"}
    assert names(extras["gui"]) == {"pyside6"}
    assert extras["all"] == ["kbert[tensorflow,torch,gui]"]
    assert "kbert[all]" in extras["test"]  # scripts/setup.sh and CI install everything
