"""Hostile `.keras` archives, and a worker process that loads them and reports its peak memory.

Run as a script (`python keras_archive_helpers.py ROOT`), it builds the archives under
ROOT, resolves each with `kbert.presets.resolve_preset` and prints one JSON line:
`{"results": {case: message}, "peak_rss_bytes": N, "outside": [files written outside]}`.
"""

import json
import pathlib
import stat
import sys
import zipfile

# The weights member of the bomb: this many bytes of zeros (more than the worker's memory
# limit, were it inflated), deflated to about 1.5 MB.
BOMB_BYTES = 3 * 2**29
_CHUNK = bytes(16 * 2**20)
_CONFIG = {
    "module": "kbert.models.bert_classifier",
    "class_name": "BertClassifier",
    "config": {},
    "registered_name": "kbert>BertClassifier",
}


def write_archive(path, members):
    """A zip at `path` of `members`: `{name: bytes}`, or `{name: (bytes, external_attr)}`."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            data, attributes = data if isinstance(data, tuple) else (data, None)
            info = zipfile.ZipInfo(name)
            if attributes is not None:
                info.external_attr = attributes
            archive.writestr(info, data)
    return path


def link_attributes():
    """`external_attr` of a symbolic link member (what `zip --symlinks` writes)."""
    return (stat.S_IFLNK | 0o777) << 16


def write_deflate_bomb(path, size=BOMB_BYTES):
    """A `.keras` whose `model.weights.h5` is `size` bytes of zeros, deflated."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("config.json", json.dumps(_CONFIG))
        info = zipfile.ZipInfo("model.weights.h5")
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w", force_zip64=True) as member:
            for _ in range(size // len(_CHUNK)):
                member.write(_CHUNK)
    return path


def write_traversal(path):
    """A `.keras` with a member that climbs out of the archive's folder."""
    return write_archive(
        path,
        {
            "config.json": json.dumps(_CONFIG).encode(),
            "model.weights.h5": b"\x89HDF\r\n\x1a\n",
            "assets/../../escaped.txt": b"outside",
        },
    )


def run_worker(root):
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from hostile_file_cases import peak_memory_bytes
    from kbert.presets import resolve_preset

    root = pathlib.Path(root)
    cases = {
        "deflate_bomb": write_deflate_bomb(root / "bomb.keras"),
        "traversal": write_traversal(root / "archives" / "traversal.keras"),
    }
    results = {}
    for name, path in cases.items():
        try:
            resolve_preset(path, cache_dir=root / "cache")
            results[name] = None
        except ValueError as error:
            results[name] = str(error)
    outside = [str(path) for path in root.rglob("escaped.txt")]
    print(json.dumps({"results": results, "peak_rss_bytes": peak_memory_bytes(), "outside": outside}))


if __name__ == "__main__":
    (pathlib.Path(sys.argv[1]) / "archives").mkdir(parents=True, exist_ok=True)
    run_worker(sys.argv[1])
