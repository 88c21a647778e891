"""A background export that "auto" began is finished by the process's exit, one only
scheduled is dropped, and one that a kill stopped leaves nothing a later process trusts:
the next one makes the graph again.

Each stage is a fresh process on JAX (the command line's backend) over the same tiny
classifier preset and kbert cache; the export is held at a chosen point by patching it.
"""

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from kbert.inference import inference_engine
from onnx_cache_helpers import make_classifier_preset
from process_helpers import on_the_process_pass

pytestmark = [
    on_the_process_pass("its processes run on JAX whatever the pass"),
    pytest.mark.skipif(
        importlib.util.find_spec("onnxruntime") is None or not inference_engine.can_export(),
        reason="the ONNX Runtime engine is the optional kbert[onnx] extra"),
]

# `python -c SCRIPT PRESET STAGE`: "auto" on a CPU, the export held as STAGE says.
SCRIPT = """
import json, sys, threading, time
from kbert.inference import inference_engine, onnx_cache_entry, onnx_export
from kbert.files import atomic_path
from kbert.models import BertClassifier

preset, stage = sys.argv[1], sys.argv[2]
model = BertClassifier.from_preset(preset)
inference_engine.on_cpu = lambda: True
inference_engine.AUTO_PREFERS_ONNX_RUNTIME = True


printing = threading.Lock()


def report(**facts):
    with printing:  # one line per fact, whichever thread reports it
        sys.stdout.write(json.dumps(facts) + "\\n")
        sys.stdout.flush()


def half_written(model, path, tokenizer=None):
    with atomic_path(path) as temporary:
        temporary.write_bytes(b"\\x08\\x08" * 512)
        report(held="writing")
        time.sleep(600)


def unrecorded(entry, name, data, weights_sha256):
    report(held="recording")
    time.sleep(600)


if stage == "use":
    inference_engine.SYNCHRONOUS_EXPORT_BYTES = 2**40
elif stage == "scheduled":  # a one-shot command: it ends before the export is due
    inference_engine.SYNCHRONOUS_EXPORT_BYTES = 0
    inference_engine.EXPORT_DELAY_SECONDS = 600
elif stage == "exit":  # an export still running when the main thread ends
    inference_engine.SYNCHRONOUS_EXPORT_BYTES = 0
    inference_engine.EXPORT_DELAY_SECONDS = 0
    export_graph = onnx_export.export_graph
    onnx_export.export_graph = lambda *args: time.sleep(2) or export_graph(*args)
else:
    inference_engine.SYNCHRONOUS_EXPORT_BYTES = 0
    inference_engine.EXPORT_DELAY_SECONDS = 0
    if stage == "writing":
        onnx_export.export_graph = half_written
    else:  # written and renamed into place, then held before its record
        onnx_cache_entry._record = unrecorded
expected = model.classify("the cat sat", engine="keras")
first = model.classify("the cat sat")
runner = inference_engine.engine_model(model)
difference = max(abs(first.probabilities[label] - probability)
                 for label, probability in expected.probabilities.items())
report(stage=stage, engine=type(runner).__name__, same=difference < 1e-4,
       checksum=inference_engine._entry(model)["checksum"])
if stage in ("writing", "unrecorded"):
    time.sleep(600)  # killed by the test
"""


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    return str(make_classifier_preset(tmp_path_factory.mktemp("auto-exit")))


def _start(preset, stage, cache):
    environment = dict(os.environ, KERAS_BACKEND="jax", KBERT_CACHE=str(cache))
    return subprocess.Popen([sys.executable, "-c", SCRIPT, preset, stage],
                            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _facts_until(process, wanted, timeout=240):
    """What the process reported of its first call, once its export is held at `wanted`."""
    facts, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        facts.append(json.loads(line))
        held = [fact["held"] for fact in facts if "held" in fact]
        called = [fact for fact in facts if "engine" in fact]
        if held == [wanted] and called:
            return called[0]
    process.kill()
    raise AssertionError(f"no {wanted!r} from the process: {facts} {process.stderr.read()[-3000:]}")


def _later_process_runs_the_graph(preset, cache):
    completed = subprocess.run(
        [sys.executable, "-c", SCRIPT, preset, "use"], capture_output=True, text=True,
        timeout=300, env=dict(os.environ, KERAS_BACKEND="jax", KBERT_CACHE=str(cache)))
    assert completed.returncode == 0, completed.stderr[-3000:]
    facts = json.loads(completed.stdout.splitlines()[-1])
    assert facts["engine"] == "OnnxRuntimeModel" and facts["same"]
    return facts, completed.stderr


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["writing", "unrecorded"])
def test_a_killed_export_leaves_nothing_trusted(preset, stage, tmp_path):
    process = _start(preset, stage, tmp_path / "cache")
    try:
        facts = _facts_until(process, "recording" if stage == "unrecorded" else "writing")
        assert facts["engine"] == "BertClassifier" and facts["same"]  # Keras answered
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
    entry = tmp_path / "cache" / "onnx" / facts["checksum"][:32]
    assert not (entry / "manifest.json").exists()
    later, stderr = _later_process_runs_the_graph(preset, tmp_path / "cache")
    if stage == "unrecorded":  # the graph was in place, without its record: refused
        assert "has no record in manifest.json" in stderr and "it is made again" in stderr
    assert json.loads((entry / "manifest.json").read_text())["graphs"]["model.onnx"]


@pytest.mark.slow
def test_an_exit_during_the_export_finishes_the_graph(preset, tmp_path):
    environment = dict(os.environ, KERAS_BACKEND="jax", KBERT_CACHE=str(tmp_path / "cache"))
    completed = subprocess.run([sys.executable, "-c", SCRIPT, preset, "exit"],
                               capture_output=True, text=True, timeout=300, env=environment)
    assert completed.returncode == 0, completed.stderr[-3000:]  # not aborted in native code
    facts = json.loads(completed.stdout.splitlines()[-1])
    assert facts["engine"] == "BertClassifier"  # the export was still running
    entry = tmp_path / "cache" / "onnx" / facts["checksum"][:32]
    assert json.loads((entry / "manifest.json").read_text())["graphs"]["model.onnx"]
    _, stderr = _later_process_runs_the_graph(preset, tmp_path / "cache")
    assert "ONNX graph" not in stderr  # taken as recorded, not made again


def test_an_exit_before_the_export_is_due_makes_nothing(preset, tmp_path):
    environment = dict(os.environ, KERAS_BACKEND="jax", KBERT_CACHE=str(tmp_path / "cache"))
    completed = subprocess.run([sys.executable, "-c", SCRIPT, preset, "scheduled"],
                               capture_output=True, text=True, timeout=300, env=environment)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert json.loads(completed.stdout.splitlines()[-1])["engine"] == "BertClassifier"
    assert not (tmp_path / "cache" / "onnx").exists()
