"""Writes pretraining instances as `.npz` shards plus a JSON manifest, streaming."""

import hashlib
import json
import logging
import pathlib

import numpy as np

from kbert.argument_checks import check_integer
from kbert.files.atomic_write import write_json_atomically
from kbert.files.atomic_write import write_stream_atomically

logger = logging.getLogger("kbert.pretraining")

MANIFEST_FILE = "manifest.json"
FORMAT_NAME = "kbert-pretraining-data"
FORMAT_VERSION = 1
SHARD_PATTERN = "shard-{:05d}.npz"


class ShardWriter:
    """Accumulates batches of instances and writes them in shards of a fixed size.

    At most `instances_per_shard` instances (plus one incoming batch) are held in
    memory. Each shard is an uncompressed `.npz` of equally long arrays, written under
    a temporary name and renamed when complete. `close()` writes the last, smaller
    shard and then `manifest.json`, also atomically: a folder with a manifest is
    complete, one without it is not (readers refuse it).

    The manifest records the format, every shard's file name and instance count, the
    total, each array's dtype and per-instance shape, and the caller's `metadata`
    (settings, vocabulary fingerprint, statistics).

    Args:
        folder: the output folder; created if missing. It must not already hold a
            manifest or shards.
        instances_per_shard: instances per shard file.
        metadata: a JSON-serialisable dict stored in the manifest.

    Examples:

    >>> with ShardWriter("data/", instances_per_shard=10000) as writer:
    ...     for batch in builder.build(corpus):
    ...         writer.write(batch)
    """

    def __init__(self, folder, instances_per_shard=10000, metadata=None):
        check_integer("instances_per_shard", instances_per_shard, 1)
        self.folder = pathlib.Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        existing = [self.folder / MANIFEST_FILE] + sorted(self.folder.glob("shard-*.npz"))
        existing = [path for path in existing if path.exists()]
        if existing:
            raise ValueError(
                f"{self.folder} already holds pretraining data ({existing[0].name}); "
                "choose an empty folder or delete the old files first."
            )
        self.instances_per_shard = int(instances_per_shard)
        self.metadata = dict(metadata or {})
        self.shards = []
        self.num_instances = 0
        self.peak_buffered_instances = 0
        self._schema = None
        self._pending = []
        self._pending_count = 0
        self._closed = False

    def write(self, batch):
        """Adds a batch: a dict of numpy arrays with the same first dimension."""
        if self._closed:
            raise ValueError("The ShardWriter is closed.")
        batch = {name: np.asarray(array) for name, array in batch.items()}
        counts = {name: array.shape[0] if array.ndim else None for name, array in batch.items()}
        if len(set(counts.values())) != 1 or None in counts.values():
            raise ValueError(
                f"Every array of a batch must have the same first dimension. Received: {counts}"
            )
        schema = {name: (array.dtype.str, array.shape[1:]) for name, array in batch.items()}
        if self._schema is None:
            self._schema = schema
        elif schema != self._schema:
            raise ValueError(
                "Every batch must have the arrays of the first one, with the same dtypes "
                f"and per-instance shapes. Expected: {self._schema}. Received: {schema}"
            )
        self._pending.append(batch)
        self._pending_count += next(iter(counts.values()))
        self.peak_buffered_instances = max(self.peak_buffered_instances, self._pending_count)
        while self._pending_count >= self.instances_per_shard:
            self._write_shard(self.instances_per_shard)

    def close(self, metadata=None):
        """Writes the remaining instances and the manifest; returns the manifest.

        Args:
            metadata: more entries for the manifest (such as final statistics).
        """
        if self._closed:
            raise ValueError("The ShardWriter is closed.")
        if self._pending_count:
            self._write_shard(self._pending_count)
        if not self.shards:
            raise ValueError("No instances were written; the manifest would list no shards.")
        self.metadata.update(metadata or {})
        manifest = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "num_instances": self.num_instances,
            "arrays": {
                name: {"dtype": np.dtype(dtype).name, "shape": list(shape)}
                for name, (dtype, shape) in self._schema.items()
            },
            "shards": self.shards,
            **self.metadata,
        }
        write_json_atomically(self.folder / MANIFEST_FILE, manifest)
        self._closed = True
        logger.info(
            "Wrote %d instances in %d shard(s) to %s",
            self.num_instances,
            len(self.shards),
            self.folder,
        )
        return manifest

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc_info):
        # Without an exception the data set is finished; after one, the shards written
        # so far stay without a manifest, which marks the folder incomplete.
        if exc_type is None and not self._closed:
            self.close()

    def _write_shard(self, count):
        if len(self._pending) == 1:
            merged = self._pending[0]  # slicing below makes views, not copies
        else:
            merged = {
                name: np.concatenate([batch[name] for batch in self._pending])
                for name in self._schema
            }
        shard = {name: array[:count] for name, array in merged.items()}
        rest = {name: array[count:] for name, array in merged.items()}
        self._pending_count -= count
        self._pending = [rest] if self._pending_count else []

        name = SHARD_PATTERN.format(len(self.shards))
        write_stream_atomically(self.folder / name, lambda file: np.savez(file, **shard))
        self.shards.append({"file": name, "num_instances": int(count)})
        self.num_instances += int(count)


def vocabulary_fingerprint(tokenizer):
    """A SHA-256 of the vocabulary and the settings that change token ids.

    Stored in the manifest so a reader can tell data made with another vocabulary.
    """
    digest = hashlib.sha256()
    settings = {
        key: value
        for key, value in tokenizer.get_config().items()
        if key in ("lowercase", "strip_accents", "tokenize_chinese_chars")
    }
    digest.update(json.dumps(settings, sort_keys=True).encode("utf-8"))
    for token in tokenizer.vocabulary:
        digest.update(token.encode("utf-8") + b"\n")
    return digest.hexdigest()
