"""The ONNX Runtime engine's cache is written as every kbert cache entry.

The graph is written beside its place in the cache and renamed there, so that nothing
is renamed between file systems (a `$TMPDIR` on tmpfs, the cache on disk); a full disk
is one sentence naming the file being written, once; and of several processes that
want the graph first, one exports it while the others wait for it, none fails.
"""

import errno
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("onnxruntime", reason="the ONNX Runtime engine is the optional kbert[onnx] extra")
pytest.importorskip("onnx", reason="the ONNX Runtime engine is the optional kbert[onnx] extra")

from kbert.inference import inference_engine  # noqa: E402
from kbert.inference import onnx_export  # noqa: E402
from onnx_cache_helpers import KBERT_GRAPH  # noqa: E402
from onnx_cache_helpers import MANIFEST_FILE  # noqa: E402
from onnx_cache_helpers import assert_recorded  # noqa: E402
from onnx_cache_helpers import entry_of  # noqa: E402
from onnx_cache_helpers import cache  # noqa: E402,F401 (a fixture)
from onnx_cache_helpers import classifier  # noqa: E402,F401 (a fixture)
from onnx_cache_helpers import first_use  # noqa: E402
from onnx_cache_helpers import preset  # noqa: E402,F401 (a fixture)
from process_helpers import finished_outputs  # noqa: E402
from process_helpers import on_the_process_pass  # noqa: E402

can_export = pytest.mark.skipif(not inference_engine.can_export(),
                                reason="the ONNX export needs onnx")


def _replace_within_folders(real_replace):
    """`os.replace` as between two file systems: within one folder only."""

    def replace(source, destination, *args, **kwargs):
        if os.path.dirname(os.path.abspath(source)) != os.path.dirname(os.path.abspath(destination)):
            raise OSError(errno.EXDEV, "Invalid cross-device link", str(source))
        return real_replace(source, destination, *args, **kwargs)

    return replace


@can_export
def test_the_export_into_the_cache_moves_nothing_between_folders(classifier, cache,
                                                                 monkeypatch):
    monkeypatch.setattr(os, "replace", _replace_within_folders(os.replace))
    got = first_use(classifier)
    expected = classifier.classify("the cat sat", engine="keras")
    assert got.label == expected.label and abs(got.probability - expected.probability) < 1e-4
    entry = entry_of(classifier)
    assert sorted(os.listdir(entry)) == [MANIFEST_FILE, "model.onnx"]  # no scratch left
    assert_recorded(classifier, (entry / "model.onnx").read_bytes())


def test_the_export_is_written_beside_the_graph_not_moved(classifier, tmp_path, monkeypatch):
    monkeypatch.setattr(os, "replace", _replace_within_folders(os.replace))
    path = tmp_path / "entry" / "model.onnx"
    path.parent.mkdir()
    onnx_export.export_graph(classifier, path)
    assert path.stat().st_size > 0 and os.listdir(path.parent) == ["model.onnx"]


def test_a_full_disk_in_the_cache_export_names_the_graph(classifier, tmp_path, monkeypatch):
    from kbert.inference.onnx_graph_builder import OnnxGraphBuilder

    def full(self, file):
        raise OSError(errno.ENOSPC, "No space left on device", file.name)

    monkeypatch.setattr(OnnxGraphBuilder, "write", full)
    path = tmp_path / "entry" / "model.onnx"
    path.parent.mkdir()
    with pytest.raises(OSError) as raised:
        onnx_export.export_graph(classifier, path)
    assert raised.value.errno == errno.ENOSPC
    assert raised.value.strerror == f"No space left on the device while writing {str(path)!r}"
    assert os.listdir(path.parent) == []  # its temporary removed


def test_a_full_disk_in_an_onnx_folder_names_the_destination(classifier, tmp_path,
                                                             monkeypatch):
    from kbert.inference import onnx_folder

    def full(model, path, tokenizer=None):
        raise OSError(errno.ENOSPC, f"Not enough free space to write {str(path)!r}: it "
                                    "needs about 1.0 MiB")

    monkeypatch.setattr(onnx_folder, "export_graph", full)
    destination = tmp_path / "exported"
    with pytest.raises(OSError) as raised:
        onnx_folder.write_onnx_folder(classifier, destination)
    assert raised.value.errno == errno.ENOSPC
    assert raised.value.strerror == f"No space left on the device while writing {str(destination)!r}"
    assert not destination.exists()
    assert not [name for name in os.listdir(tmp_path) if ".tmp-" in name]


def test_an_onnx_folder_that_would_not_fit_is_refused_before_writing(classifier, tmp_path,
                                                                       monkeypatch):
    import shutil
    import types

    from kbert.inference import onnx_folder

    monkeypatch.setattr(shutil, "disk_usage", lambda folder: types.SimpleNamespace(
        total=10 << 30, used=10 << 30, free=4096))
    destination = tmp_path / "exported"
    with pytest.raises(OSError) as raised:
        onnx_folder.write_onnx_folder(classifier, destination)
    assert raised.value.errno == errno.ENOSPC
    assert raised.value.strerror.startswith(
        f"Not enough free space to write {str(destination)!r}: it needs about ")
    assert os.listdir(tmp_path) == []


CONCURRENT_SCRIPT = r"""
import json, os, pathlib, sys, time
from kbert.inference import onnx_export
from kbert.models import BertClassifier

preset, graph, ready, exports = sys.argv[1:5]

def export_graph(model, path, tokenizer=None):
    with open(exports, "a") as log:
        log.write(f"{os.getpid()}\n")
    deadline = time.monotonic() + 120
    while len(os.listdir(ready)) < 8 and time.monotonic() < deadline:
        time.sleep(0.1)  # every process is asking for the graph by now
    pathlib.Path(path).write_bytes(pathlib.Path(graph).read_bytes())

onnx_export.export_graph = export_graph
model = BertClassifier.from_preset(preset)
pathlib.Path(ready, str(os.getpid())).touch()
print("RESULT" + json.dumps(model.classify("the cat sat", engine="onnxruntime").label))
"""


@on_the_process_pass("its processes run on JAX whatever the pass")
@pytest.mark.slow
def test_eight_processes_on_the_first_use_wait_for_one_export(preset, tmp_path):
    (tmp_path / "ready").mkdir()
    (tmp_path / "graph.onnx").write_bytes(KBERT_GRAPH)
    environment = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu",
                       KBERT_CACHE=str(tmp_path / "cache"), TF_CPP_MIN_LOG_LEVEL="3")
    processes = [
        subprocess.Popen([sys.executable, "-c", CONCURRENT_SCRIPT, str(preset),
                          str(tmp_path / "graph.onnx"), str(tmp_path / "ready"),
                          str(tmp_path / "exports.log")],
                         env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
        for _ in range(8)
    ]
    outputs = finished_outputs(processes, timeout=300)  # every process exits with 0
    labels = [json.loads(next(line for line in output.splitlines()
                              if line.startswith("RESULT"))[len("RESULT"):])
              for output in outputs]
    assert labels == ["c"] * 8
    assert len((tmp_path / "exports.log").read_text().split()) == 1
