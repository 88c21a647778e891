"""Readers of the model cache wait for a writer of the same entry instead of failing.

Two processes resolving one uncached Hugging Face folder at once: both succeed and the
folder is converted once. The processes run on Keras' NumPy backend; the conversion of
the first is slowed down (while it holds the entry's lock) so that the second surely
finds it being written.
"""

import os
import subprocess
import sys
import threading
import time

import keras
import pytest
from process_helpers import PROCESS_PASS_BACKEND

from kbert.checkpoints import cache_entry
from kbert.files import OutputLock
from kbert.files import OutputLockedError
from kbert.presets import resolve_preset

from checkpoint_helpers import write_huggingface_folder

_RESOLVER = """
import sys, time
import kbert.checkpoints.convert

conversion = sys.modules["kbert.checkpoints.convert"]

original = conversion.convert

def slow_convert(*args, **kwargs):
    print("converting", flush=True)
    time.sleep(3)  # holding the entry's lock
    return original(*args, **kwargs)

conversion.convert = slow_convert
from kbert.presets import resolve_preset
print("ready", flush=True)
sys.stdin.readline()  # both start resolving at once
print("resolved", resolve_preset(sys.argv[1]), flush=True)
"""


@pytest.fixture(scope="module")
def huggingface_folder(tmp_path_factory):
    return write_huggingface_folder(tmp_path_factory.mktemp("sources") / "huggingface")


def _environment(cache):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return dict(
        os.environ,
        KERAS_BACKEND="numpy",
        TF_CPP_MIN_LOG_LEVEL="3",
        KBERT_CACHE=str(cache),
        PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]),
    )


def test_two_processes_resolving_one_uncached_folder_both_succeed_with_one_conversion(
    tmp_path, huggingface_folder
):
    if keras.backend.backend() != PROCESS_PASS_BACKEND:
        pytest.skip("runs its own processes whatever the test's backend; one pass runs it")
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _RESOLVER, str(huggingface_folder)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_environment(tmp_path / "cache"),
        )
        for _ in range(2)
    ]
    for process in processes:  # each past its imports
        assert process.stdout.readline().strip() == "ready", process.stderr.read()[-2000:]
    for process in processes:
        process.stdin.write("go\n")
        process.stdin.flush()
    outcomes = [(process.wait(timeout=300), *process.communicate()) for process in processes]
    assert [code for code, _, _ in outcomes] == [0, 0], outcomes
    stdouts = [stdout for _, stdout, _ in outcomes]
    assert sum(stdout.count("converting") for stdout in stdouts) == 1, outcomes
    resolved = {line.split(" ", 1)[1] for stdout in stdouts for line in stdout.splitlines() if line.startswith("resolved")}
    assert len(resolved) == 1, outcomes
    # The one that waited said so.
    assert any("Waiting for process" in stderr for _, _, stderr in outcomes), outcomes


def test_a_reader_waits_for_the_writer_and_uses_its_entry(tmp_path, huggingface_folder, caplog):
    cache = tmp_path / "cache"
    entry = resolve_preset(huggingface_folder, cache_dir=cache)
    written = entry.parent / "written"
    conversions = []
    holding, released = threading.Event(), threading.Event()

    def writer():
        with OutputLock(written):
            holding.set()
            time.sleep(1.5)  # longer than the reader's notice delay
            os.rename(entry, written)  # what a finished conversion leaves
        released.set()

    thread = threading.Thread(target=writer)
    thread.start()
    assert holding.wait(30)
    result = cache_entry.fill_cache_entry(written, lambda folder: conversions.append(folder))
    thread.join()
    assert released.is_set() and result == written
    assert conversions == []  # the entry was there once the lock came free
    assert "Waiting for process" in caplog.text


def test_a_writer_that_takes_too_long_is_named(tmp_path):
    entry = tmp_path / "cache" / "entry"
    holding = threading.Event()
    done = threading.Event()

    def writer():
        with OutputLock(entry):
            holding.set()
            done.wait(30)

    thread = threading.Thread(target=writer)
    thread.start()
    holding.wait(10)
    try:
        with pytest.raises(OutputLockedError, match=rf"being written by process {os.getpid()}\b"):
            cache_entry.fill_cache_entry(entry, lambda folder: None, wait_seconds=0.3)
    finally:
        done.set()
        thread.join()
