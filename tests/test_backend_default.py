"""One backend story: Python after `import kbert` runs the backend the `kbert` command
runs (JAX unless the user chose one: KERAS_BACKEND, or a keras.json naming a backend
other than the TensorFlow Keras writes there itself), and TensorFlow's start-up lines
are never printed where kbert starts TensorFlow itself, nor on a JAX run.

Keras picks its backend once, at import, so every case runs in a fresh process.
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest
from process_helpers import on_the_process_pass

from kbert.optional_packages import is_start_up_line
from kbert.optional_packages import start_up_lines_held_back

ROOT = pathlib.Path(__file__).resolve().parents[1]
only_on_the_process_pass = on_the_process_pass("runs its own processes whatever the test's backend")

# What Keras writes into keras.json on its first run.
KERAS_FIRST_RUN_JSON = {"floatx": "float32", "epsilon": 1e-07, "backend": "tensorflow",
                        "image_data_format": "channels_last"}
# TensorFlow 2.21's start-up lines on a machine without a GPU, as they came.
START_UP_LINES = (
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1796659137.235559   10401 port.cc:153] oneDNN custom operations are on.",
    "I0000 00:00:1796659137.236821   10401 cudart_stub.cc:31] Could not find cuda drivers on "
    "your machine, GPU will not be used.",
    "I0000 00:00:1796659137.860669   10401 cpu_feature_guard.cc:227] This TensorFlow binary is "
    "optimized to use available CPU instructions in performance-critical operations.",
    "To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild "
    "TensorFlow with the appropriate compiler flags.",
    "E0000 00:00:1796659258.253581   10401 cuda_platform.cc:52] failed call to cuInit: "
    "INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)",
)


def _environment(keras_home, keras_json=KERAS_FIRST_RUN_JSON, **changes):
    """No KERAS_BACKEND, TensorFlow's log level unset, keras.json as given (None: none)."""
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("KERAS_BACKEND", "TF_CPP_MIN_LOG_LEVEL",
                                  "JAX_COMPILATION_CACHE_DIR")}
    keras_home.mkdir(exist_ok=True)
    if keras_json is not None:
        (keras_home / "keras.json").write_text(json.dumps(keras_json))
    environment.update(KERAS_HOME=str(keras_home), KBERT_CACHE=str(keras_home / "cache"))
    environment.update(changes)
    return environment


def _python(code, environment):
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=600)


PYTHON_BACKEND = "import kbert, keras\nprint(keras.config.backend())\n"
COMMAND_BACKEND = ("import io, json, contextlib\nfrom kbert.cli import main\n"
                   "out = io.StringIO()\nwith contextlib.redirect_stdout(out):\n"
                   "    main(['doctor', '--json'])\n"
                   "print(json.loads(out.getvalue())['active_backend'])\n")


def _printed_and_complained(code, tmp_path):
    """(the last line `code` printed, its stderr lines) in a fresh process, no backend set."""
    completed = _python(code, _environment(tmp_path / "keras-home"))
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout.strip().splitlines()[-1], completed.stderr.splitlines()


def _backends(environment):
    """(Python's backend after `import kbert`, the command's) in fresh processes."""
    python, command = _python(PYTHON_BACKEND, environment), _python(COMMAND_BACKEND, environment)
    assert python.returncode == 0 and command.returncode == 0, python.stderr + command.stderr
    return python.stdout.strip().splitlines()[-1], command.stdout.strip().splitlines()[-1]


@only_on_the_process_pass
@pytest.mark.parametrize(
    ("keras_json", "changes", "expected"),
    [
        (KERAS_FIRST_RUN_JSON, {}, "jax"),  # Keras' own default is no choice
        (None, {}, "jax"),  # no keras.json yet
        ({"backend": "torch"}, {}, "torch"),  # the user's keras.json
        (KERAS_FIRST_RUN_JSON, {"KERAS_BACKEND": "torch"}, "torch"),  # the user's variable
    ],
)
def test_python_and_the_command_pick_the_same_backend(tmp_path, keras_json, changes, expected):
    pytest.importorskip("torch")
    environment = _environment(tmp_path / "keras-home", keras_json, **changes)
    assert _backends(environment) == (expected, expected)


@only_on_the_process_pass
@pytest.mark.slow
def test_a_jax_run_prints_no_tensorflow_lines(tmp_path):
    code = ("import sys, kbert\nfrom kbert.models import BertMaskedLM\n"
            "result = BertMaskedLM.from_preset('demo').fill_mask('the [MASK] of the lord.')\n"
            "import keras\nprint(keras.config.backend(), 'tensorflow' in sys.modules)\n")
    printed, complaints = _printed_and_complained(code, tmp_path)
    assert printed == "jax False"
    assert not [line for line in complaints
                if is_start_up_line(line) or "tensorflow" in line.lower()], complaints


def test_the_start_up_lines_are_known_and_others_are_not():
    assert all(is_start_up_line(line) for line in START_UP_LINES)
    assert not is_start_up_line("WARNING kbert: the text is longer than 512 word pieces")
    assert not is_start_up_line("E0000 00:00:1.2   10 my_kernel.cc:3] a real error")


def test_what_else_was_written_while_held_back_comes_through(capfd):
    with start_up_lines_held_back():
        os.write(2, ("\n".join(START_UP_LINES) + "\nsomething else\n").encode())
    assert capfd.readouterr().err == "something else\n"
    with pytest.raises(RuntimeError), start_up_lines_held_back():
        os.write(2, (START_UP_LINES[2] + "\n").encode())
        raise RuntimeError("TensorFlow did not start")
    assert capfd.readouterr().err == START_UP_LINES[2] + "\n"  # a failure shows everything


@only_on_the_process_pass
@pytest.mark.slow
def test_tensorflow_started_by_kbert_prints_none_of_its_start_up_lines(tmp_path):
    pytest.importorskip("tensorflow")
    code = ("import kbert\nfrom kbert.optional_packages import tensorflow_quietly\n"
            "tf = tensorflow_quietly('Reading a Google TensorFlow checkpoint')\n"
            "print(float(tf.reduce_sum(tf.constant([1.0, 2.0]))))\n")
    printed, complaints = _printed_and_complained(code, tmp_path)
    assert printed == "3.0"
    assert not [line for line in complaints if is_start_up_line(line)], complaints
