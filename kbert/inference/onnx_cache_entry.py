"""The ONNX Runtime engine's cache entry: a model's graphs, each with its recorded digest.

The graphs of one Keras model live in one folder of the kbert cache, keyed by its
weights (`kbert.inference.inference_engine.graph_path`):

    <cache>/onnx/<key>/       key: the first 32 hex digits of the weights' sha256
        model.onnx            the float32 graph (`kbert.inference.onnx_export`)
        model.int8.onnx       its dynamically quantized copy, once asked for
        manifest.json         what kbert wrote there

`manifest.json` (format 1):

    {"format": "kbert-onnx-cache", "format_version": 1, "kbert_version": "0.1.0",
     "weights_sha256": "<the 64 hex digits of the weights' sha256>",
     "graphs": {"model.onnx": {"sha256": "<64 hex digits>", "bytes": 372167}}}

A graph is written beside its final name and renamed into place
(`kbert.files.atomic_path`), then recorded in the manifest, under the entry's lock
(`kbert.checkpoints.cache_entry.fill_cache_entry`): of several processes that want it
first, one writes it and the others wait for it. Before ONNX Runtime sees a graph, its
bytes are read through the bounded reader (no link followed, a size cap the caller
derives from the model's weights) and their sha256 is compared with the record. A graph
that is not recorded, is a link or anything but a plain file, is too large, or differs
from its record is never run: a warning names it, and it is written again (or, where
the caller may not write it, removed).
"""

import hashlib
import logging
import os
import pathlib
import re
import shutil
import stat

from kbert.inference.onnx_graph_checks import read_graph

logger = logging.getLogger("kbert.inference")

MANIFEST_FILE = "manifest.json"
FORMAT = "kbert-onnx-cache"
FORMAT_VERSION = 1
_SHA256 = re.compile(r"[0-9a-f]{64}")


def cached_graph(entry, name, make, max_bytes, weights_sha256):
    """The bytes of the graph `name` of the cache entry `entry`, checked against its record.

    Args:
        entry: the entry folder, `<cache>/onnx/<key>`.
        name: the graph's file name in it (`model.onnx`, `model.int8.onnx`).
        make: `make(path)` writes the graph to `path` (atomically) when it is missing or
            damaged; None to write nothing (a damaged graph is then removed).
        max_bytes: the most bytes the graph may have.
        weights_sha256: the sha256 of the weights the graph computes with (hex).

    Returns:
        The graph's bytes, or None when it is missing and `make` is None.

    Raises:
        ValueError: when the graph `make` wrote cannot be read back.
    """
    entry = pathlib.Path(entry)
    data, _ = verified_graph(entry, name, max_bytes, weights_sha256)
    if data is not None:
        return data
    from kbert.checkpoints.cache_entry import fill_cache_entry

    entry.parent.mkdir(parents=True, exist_ok=True)
    found = {"data": None, "problem": None}

    def is_complete(folder):
        found["data"], found["problem"] = verified_graph(folder, name, max_bytes, weights_sha256)
        return found["data"] is not None

    def write(folder):
        path = folder / name
        if found["problem"] is not None:
            logger.warning("%s; %s.", found["problem"], "it is made again" if make else
                           "it is removed, and Keras runs instead (engine='onnxruntime' makes "
                           "it again)")
            _make_folder(folder)  # a link in the folder's place is removed, not followed
            _remove(path)
        if make is None:
            return
        _make_folder(folder)
        make(path)
        found["data"] = read_graph(path, max_bytes, folder.parent)
        _record(folder, name, found["data"], weights_sha256)

    fill_cache_entry(entry, write, is_complete=is_complete)
    return found["data"]


def verified_graph(entry, name, max_bytes, weights_sha256):
    """`(bytes, None)` for a graph that is as recorded, else `(None, problem)`.

    `problem` is a sentence naming the graph and what is wrong with it, or None when
    there is no graph at all.
    """
    entry = pathlib.Path(entry)
    path = entry / name
    if not os.path.lexists(entry):
        return None, None
    problem = _not_plain(entry, "folder", stat.S_ISDIR, f"its folder {str(entry)!r}")
    if problem is None and not os.path.lexists(path):
        return None, None
    problem = problem or _not_plain(path, "file", stat.S_ISREG, "it")
    if problem is not None:
        return None, f"The cached ONNX graph {str(path)!r} cannot be used: {problem}"
    try:
        record = _records(entry, weights_sha256).get(name)
        if record is None:
            return None, f"The cached ONNX graph {str(path)!r} has no record in {MANIFEST_FILE}"
        if record["bytes"] > max_bytes:
            return None, (f"The cached ONNX graph {str(path)!r} is recorded with "
                          f"{record['bytes']} bytes, more than the {max_bytes} its model's may have")
        data = read_graph(path, record["bytes"], entry.parent)
    except ValueError as error:
        return None, f"The cached ONNX graph {str(path)!r} cannot be used: {error}"
    if len(data) != record["bytes"] or hashlib.sha256(data).hexdigest() != record["sha256"]:
        return None, (f"The cached ONNX graph {str(path)!r} is not the one kbert wrote (its "
                      f"size or SHA-256 differs from the record in {MANIFEST_FILE})")
    return data, None


def _is_folder(path):
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _not_plain(path, kind, is_kind, subject):
    """Why `path` (`subject` in the sentence) is not a plain `kind`, or None when it is."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return f"{subject} is missing"
    except OSError as error:
        return f"{subject} cannot be read ({error.strerror})"
    if stat.S_ISLNK(mode):
        return f"{subject} is a symbolic link, which kbert does not follow in its cache"
    if not is_kind(mode):
        return f"{subject} is not a plain {kind}"
    return None


def _records(entry, weights_sha256):
    """The manifest's graphs: name -> {"sha256", "bytes"} ({} where there is no manifest).

    Raises:
        ValueError: for a manifest that is unreadable, malformed or of other weights.
    """
    from kbert.files import read_json

    path = pathlib.Path(entry) / MANIFEST_FILE
    if not os.path.lexists(path):
        return {}
    problem = _not_plain(path, "file", stat.S_ISREG, f"{str(path)!r}")
    if problem is not None:
        raise ValueError(problem)
    manifest = read_json(path, "config", pathlib.Path(entry).parent)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValueError(f"{str(path)!r} is not a kbert ONNX cache manifest")
    if manifest.get("weights_sha256") != weights_sha256:
        raise ValueError(f"{str(path)!r} records other weights than the model's")
    graphs = manifest.get("graphs")
    if not isinstance(graphs, dict):
        raise ValueError(f"{str(path)!r} has no `graphs` object")
    records = {}
    for name, record in graphs.items():
        if (isinstance(record, dict) and isinstance(record.get("sha256"), str)
                and _SHA256.fullmatch(record["sha256"])
                and type(record.get("bytes")) is int and record["bytes"] >= 0):
            records[name] = {"sha256": record["sha256"], "bytes": record["bytes"]}
    return records


def _record(entry, name, data, weights_sha256):
    """Records the graph `name` (its bytes `data`) in the entry's manifest."""
    import kbert
    from kbert.files import write_json_atomically

    try:
        graphs = _records(entry, weights_sha256)
    except ValueError:
        graphs = {}  # a damaged manifest: the graphs it named are made again on use
    graphs[name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "kbert_version": kbert.__version__, "weights_sha256": weights_sha256,
                "graphs": graphs}
    _remove(pathlib.Path(entry) / MANIFEST_FILE)
    write_json_atomically(pathlib.Path(entry) / MANIFEST_FILE, manifest)


def _make_folder(folder):
    """`folder` as a real folder: a link or a file in its place is removed first."""
    folder = pathlib.Path(folder)
    if os.path.lexists(folder) and not _is_folder(folder):
        os.unlink(folder)
    folder.mkdir(exist_ok=True)


def _remove(path):
    """Removes what is at `path` (a link itself, not its target; a folder with its files)."""
    if not os.path.lexists(path):
        return
    if _is_folder(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)
