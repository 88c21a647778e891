"""The light install: `pip install kbert-keras` is Keras and JAX; the rest are extras that the
errors name.

A package that is not installed is simulated in a fresh process (Keras picks its backend
once, at import) by a finder that answers ModuleNotFoundError for it, as Python does for
a package that is not there; in this process, by `sys.modules[name] = None`.
"""

import json
import os
import pathlib
import subprocess
import sys

import keras
import pytest
from process_helpers import on_the_process_pass

from kbert.optional_packages import missing_extra_message
from kbert.optional_packages import require_extra

ROOT = pathlib.Path(__file__).resolve().parents[1]

only_on_the_process_pass = on_the_process_pass(
    "runs its own processes whatever the test's backend"
)


def test_the_missing_package_names_its_extra():
    assert missing_extra_message(ModuleNotFoundError(name="torch")).endswith(
        'pip install "kbert-keras[torch]"'
    )
    assert 'pip install "kbert-keras[gui]"' in missing_extra_message(
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
    assert message.endswith('pip install "kbert-keras[tensorflow]"')


# Installed in the child process ahead of every finder: the packages it names (and their
# submodules) are not found, as if not installed; nothing is put in sys.modules, where
# other libraries look for them (SciPy checks for a loaded torch).
BLOCKER = """
import sys

class NotInstalled:
    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled(%r))
"""


def _without(packages, backend, code):
    packages = [packages] if isinstance(packages, str) else list(packages)
    script = BLOCKER % (packages,) + code
    environment = dict(os.environ, KERAS_BACKEND=backend)
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


@only_on_the_process_pass
def test_the_command_on_a_backend_that_is_not_installed_names_the_extra():
    completed = _without(
        "torch",
        "torch",
        "from kbert.cli import main\nsys.exit(main(['fill-mask', '--model', 'demo', 'a [MASK]']))",
    )
    assert completed.returncode == 1, completed.stderr[-3000:]
    assert completed.stderr.count("\n") == 1, completed.stderr
    assert completed.stderr.startswith("kbert fill-mask: error: PyTorch is not installed")
    assert completed.stderr.strip().endswith('pip install "kbert-keras[torch]"')


@only_on_the_process_pass
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
    assert completed.stdout.strip().endswith('pip install "kbert-keras[tensorflow]"'), completed.stdout


IMPORT_MODELS = (
    "try:\n"
    "    import kbert.models\n"
    "except ModuleNotFoundError as error:\n"
    "    print(error)\n"
)


@only_on_the_process_pass
def test_importing_the_models_on_a_backend_that_is_not_installed_names_the_extra():
    completed = _without("torch", "torch", IMPORT_MODELS)
    assert completed.returncode == 0, completed.stderr[-3000:]
    message = completed.stdout.strip()
    assert message.startswith("Keras' backend is 'torch'") and "\n" not in message, message
    assert 'pip install "kbert-keras[torch]"' in message and message.endswith("KERAS_BACKEND=jax")


def _without_backend_setting(packages, keras_home, code):
    """`_without`, with KERAS_BACKEND unset and Keras' settings folder at `keras_home`."""
    environment = {key: value for key, value in os.environ.items() if key != "KERAS_BACKEND"}
    return subprocess.run(
        [sys.executable, "-c", BLOCKER % (list(packages),) + code],
        cwd=ROOT,
        env=dict(environment, KERAS_HOME=str(keras_home)),
        capture_output=True,
        text=True,
        timeout=300,
    )


REPORT_BACKEND = IMPORT_MODELS + "import keras\nprint('backend', keras.config.backend())\n"


@only_on_the_process_pass
def test_with_no_backend_asked_for_a_missing_default_gives_way_to_jax(tmp_path):
    # Keras' default (TensorFlow), or the backend its keras.json names, is not installed.
    completed = _without_backend_setting(["tensorflow"], tmp_path, REPORT_BACKEND)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip() == "backend jax", completed.stdout
    (tmp_path / "keras.json").write_text(json.dumps({"backend": "torch"}))
    completed = _without_backend_setting(["torch"], tmp_path, REPORT_BACKEND)
    assert completed.stdout.strip() == "backend jax", completed.stdout + completed.stderr[-3000:]


@only_on_the_process_pass
def test_an_installed_backend_in_keras_json_is_kept(tmp_path):
    (tmp_path / "keras.json").write_text(json.dumps({"backend": "torch"}))
    completed = _without_backend_setting([], tmp_path, REPORT_BACKEND)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip() == "backend torch", completed.stdout


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
    assert names(extras["onnx"]) == {"onnxruntime", "onnx"}  # no TensorFlow: kbert writes the graph
    assert extras["all"] == ["kbert-keras[tensorflow,torch,gui,search,onnx]"]
    assert "kbert-keras[all]" in extras["test"]  # scripts/setup.sh and CI install everything


# What the light install leaves out, and what only the tests install.
NOT_IN_THE_CORE = ("tensorflow", "torch", "PySide6", "keras_hub", "keras_nlp", "transformers")


@only_on_the_process_pass
@pytest.mark.slow
def test_the_core_runs_fill_mask_and_a_fit_on_strings_without_the_extras():
    completed = _without(
        NOT_IN_THE_CORE,
        "jax",
        "from kbert.cli import main\n"
        "assert main(['fill-mask', '--model', 'demo', 'a [MASK] of France.']) == 0\n"
        "from kbert.models import BertClassifier\n"
        "model = BertClassifier.from_preset('demo', label_names=['no', 'yes'])\n"
        "history = model.fit(['a fine film', 'a dull plot'], ['yes', 'no'], epochs=1, verbose=0)\n"
        "print('loss', history.history['loss'][0])\n",
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "[MASK] at 2:8" in completed.stdout and "loss" in completed.stdout, completed.stdout
