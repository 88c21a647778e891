"""A weights file truncated and restored in place while it is read: an error, never a signal.

A memory-mapped read of a file that shrinks underneath dies of SIGBUS. kbert reads into
memory in bounded chunks instead, and refuses a file whose size changes during the read.
The loader runs in its own process, so that a signal would show as its negative return
code; a second process truncates and restores the file, 50 times.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from kbert.checkpoints.huggingface_tensors import HuggingFaceTensors
from kbert.checkpoints.safetensors_reader import read_safetensors

safetensors_numpy = pytest.importorskip("safetensors.numpy")

ITERATIONS = 50

MUTATOR = textwrap.dedent(
    """
    import os, sys, time
    path, iterations = sys.argv[1], int(sys.argv[2])
    original = open(path, "rb").read()
    for _ in range(iterations):
        with open(path, "r+b") as file:
            file.truncate(len(original) // 3)
        time.sleep(0.004)
        with open(path, "r+b") as file:
            file.write(original)
        time.sleep(0.004)
    """
)

LOADER = textwrap.dedent(
    """
    import json, os, sys
    import numpy as np
    from kbert.checkpoints.huggingface_tensors import HuggingFaceTensors
    folder, expected_path, stop = sys.argv[1], sys.argv[2], sys.argv[3]
    expected = dict(np.load(expected_path))
    counts = {"correct": 0, "refused": 0, "wrong": 0, "messages": []}
    while not os.path.exists(stop) or counts["correct"] + counts["refused"] == 0:
        try:
            tensors = HuggingFaceTensors(folder)
            arrays = {name: tensors.array(name) for name in expected}
        except ValueError as error:
            counts["refused"] += 1
            if len(counts["messages"]) < 5:
                counts["messages"].append(str(error))
            continue
        same = all(np.array_equal(arrays[name], expected[name]) for name in expected)
        counts["correct" if same else "wrong"] += 1
    print(json.dumps(counts))
    """
)


def write_weights(folder):
    rng = np.random.default_rng(0)
    arrays = {
        f"layer{index}.weight": rng.standard_normal((512, 512), "float32") for index in range(24)
    }
    folder.mkdir()
    safetensors_numpy.save_file(arrays, str(folder / "model.safetensors"))
    np.savez(folder.parent / "expected.npz", **arrays)
    return arrays


def test_a_file_truncated_and_restored_while_read_never_kills_the_reader(tmp_path):
    folder = tmp_path / "hf"
    write_weights(folder)
    stop = tmp_path / "mutator_done"
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    loader = subprocess.Popen(
        [sys.executable, "-c", LOADER, str(folder), str(tmp_path / "expected.npz"), str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    try:
        mutator = subprocess.run(
            [sys.executable, "-c", MUTATOR, str(folder / "model.safetensors"), str(ITERATIONS)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert mutator.returncode == 0, mutator.stderr
        stop.touch()
        output, errors = loader.communicate(timeout=300)
    finally:
        if loader.poll() is None:
            loader.kill()
    assert loader.returncode >= 0, f"the loader died of signal {-loader.returncode}"
    assert loader.returncode == 0, errors[-3000:]
    counts = json.loads(output.strip().splitlines()[-1])
    assert counts["wrong"] == 0, counts
    for message in counts["messages"]:
        assert "model.safetensors" in message and "\n" not in message, message


def test_a_file_that_shrank_during_the_read_is_refused_naming_it(tmp_path, monkeypatch):
    from kbert.checkpoints import safetensors_reader

    folder = tmp_path / "hf"
    write_weights(folder)
    path = folder / "model.safetensors"
    original_read_range = safetensors_reader._read_range

    def truncate_then_read(*args):
        os.truncate(path, path.stat().st_size // 2)
        return original_read_range(*args)

    monkeypatch.setattr(safetensors_reader, "_read_range", truncate_then_read)
    with pytest.raises(ValueError, match=r"model\.safetensors.*changed during the read"):
        read_safetensors(path)


def test_safetensors_are_read_exactly_without_the_library(tmp_path):
    folder = tmp_path / "hf"
    arrays = write_weights(folder)
    tensors = HuggingFaceTensors(folder)
    for name, array in arrays.items():
        np.testing.assert_array_equal(tensors.array(name), array)
