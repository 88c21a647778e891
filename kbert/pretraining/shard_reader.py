"""Reads the shards of `ShardWriter` back as batches of model inputs, one shard at a time."""

import json
import pathlib

import numpy as np

from kbert.argument_checks import check_integer
from kbert.pretraining.shard_writer import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST_FILE,
    vocabulary_fingerprint,
)

_REQUIRED_ARRAYS = ("token_ids", "segment_ids", "lengths", "nsp_labels")
_MASK_ARRAYS = ("mask_positions", "mask_ids", "mask_weights")


class ShardReader:
    """A pretraining data set written by `kbert create-pretraining-data`.

    The manifest is checked when the reader opens; each shard when it is loaded (no
    pickles, only plain arrays, with the dtypes, shapes and count the manifest
    promises). Memory holds one shard and the part of a batch carried over from the
    previous one.

    Args:
        folder: the folder holding `manifest.json` and the shards.

    Examples:

    >>> reader = ShardReader("data/")
    >>> for batch in reader.batches(32, shuffle=True, seed=epoch):
    ...     ...
    """

    def __init__(self, folder):
        self.folder = pathlib.Path(folder)
        path = self.folder / MANIFEST_FILE
        if not path.is_file():
            raise ValueError(
                f"{self.folder} has no {MANIFEST_FILE}: it is not pretraining data, or "
                "writing it did not finish."
            )
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{path} is not valid JSON: {error}") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
            raise ValueError(f"{path} is not a kbert pretraining data manifest.")
        if manifest.get("format_version") != FORMAT_VERSION:
            raise ValueError(
                f"{path} has format_version {manifest.get('format_version')!r}; this kbert "
                f"reads version {FORMAT_VERSION}."
            )
        arrays = manifest.get("arrays", {})
        missing = [name for name in _REQUIRED_ARRAYS if name not in arrays]
        if missing:
            raise ValueError(f"{path} lists no array {missing[0]!r}.")
        shards = manifest.get("shards")
        if not isinstance(shards, list) or not shards:
            raise ValueError(f"{path} lists no shards.")
        for shard in shards:
            file_name = shard.get("file") if isinstance(shard, dict) else None
            count = shard.get("num_instances") if isinstance(shard, dict) else None
            if (
                not isinstance(file_name, str)
                or pathlib.Path(file_name).name != file_name
                or not isinstance(count, int)
                or count < 1
            ):
                raise ValueError(f"{path}: bad shard entry {shard!r}")
        self.manifest = manifest
        self.masked = all(name in arrays for name in _MASK_ARRAYS)

    @property
    def num_instances(self):
        return int(self.manifest["num_instances"])

    @property
    def num_rows(self):
        """The rows `batches` yields in one pass: one per instance (packed readers: fewer)."""
        return self.num_instances

    @property
    def sequence_length(self):
        return int(self.manifest["arrays"]["token_ids"]["shape"][0])

    @property
    def max_predictions_per_seq(self):
        """`P`, or None for unmasked data (masked at training time)."""
        if not self.masked:
            return None
        return int(self.manifest["arrays"]["mask_positions"]["shape"][0])

    def check_vocabulary(self, tokenizer):
        """Raises `ValueError` unless the data was made with `tokenizer`'s vocabulary."""
        expected = self.manifest.get("vocabulary", {}).get("fingerprint")
        actual = vocabulary_fingerprint(tokenizer)
        if expected != actual:
            raise ValueError(
                f"{self.folder} was made with another vocabulary or tokenizer settings "
                f"(fingerprint {expected}, the tokenizer's is {actual})."
            )

    def batches(self, batch_size, shuffle=False, seed=None, drop_remainder=False):
        """Yields batches of model inputs and targets.

        Args:
            batch_size: instances per batch.
            shuffle: whether to visit the shards, and the instances in each, in a
                random order.
            seed: the seed of that order (use a different one every epoch).
            drop_remainder: whether to leave out the last, smaller batch.

        Yields:
            Dicts of numpy arrays: `token_ids`, `segment_ids` `(B, L)` int32,
            `padding_mask` `(B, L)` bool, `nsp_labels` `(B,)` int32 and, for masked
            data, `mask_positions`, `mask_ids` `(B, P)` int32 and `mask_weights`
            `(B, P)` float32.
        """
        check_integer("batch_size", batch_size, 1)
        rng = np.random.default_rng(seed)
        numbers = np.arange(len(self.manifest["shards"]))
        if shuffle:
            numbers = rng.permutation(len(numbers))
        carry = None
        for number in numbers:
            arrays = self._rows(int(number))
            if shuffle:
                order = rng.permutation(len(arrays["token_ids"]))
                arrays = {name: array[order] for name, array in arrays.items()}
            if carry is not None:
                arrays = {
                    name: np.concatenate([carry[name], array]) for name, array in arrays.items()
                }
            count = len(arrays["token_ids"])
            full = count - count % batch_size
            for start in range(0, full, batch_size):
                yield {name: array[start : start + batch_size] for name, array in arrays.items()}
            carry = {name: array[full:] for name, array in arrays.items()} if full < count else None
        if carry is not None and not drop_remainder:
            yield carry

    def _rows(self, number):
        """The model rows of shard `number` (of the manifest), in stored order."""
        return _model_batch(self._load(self.manifest["shards"][number]))

    def _load(self, shard, names=None):
        """The arrays of `shard` (only `names`, if given), checked against the manifest."""
        path = self.folder / shard["file"]
        if not path.is_file():
            raise ValueError(f"Shard {path} listed in {MANIFEST_FILE} is missing.")
        try:
            with np.load(path, allow_pickle=False) as contents:
                arrays = {
                    name: contents[name]
                    for name in contents.files
                    if names is None or name in names
                }
        except (ValueError, OSError) as error:
            raise ValueError(f"Shard {path} cannot be read: {error}") from None
        for name, spec in self.manifest["arrays"].items():
            if names is not None and name not in names:
                continue
            array = arrays.get(name)
            expected_shape = (shard["num_instances"], *spec["shape"])
            if (
                array is None
                or array.dtype != np.dtype(spec["dtype"])
                or array.shape != expected_shape
            ):
                found = "missing" if array is None else f"{array.dtype} {array.shape}"
                raise ValueError(
                    f"Shard {path}: array {name!r} should be {spec['dtype']} {expected_shape}. "
                    f"Received: {found}"
                )
        return arrays

    def __repr__(self):
        return (
            f"ShardReader({str(self.folder)!r}, {self.num_instances} instances, "
            f"{len(self.manifest['shards'])} shards, masked={self.masked})"
        )


def _model_batch(arrays):
    length = arrays["token_ids"].shape[1]
    batch = {
        "token_ids": arrays["token_ids"].astype(np.int32),
        "segment_ids": arrays["segment_ids"].astype(np.int32),
        "padding_mask": np.arange(length)[None, :] < arrays["lengths"][:, None],
        "nsp_labels": arrays["nsp_labels"].astype(np.int32),
    }
    for name in _MASK_ARRAYS:
        if name in arrays:
            batch[name] = arrays[name]
    return batch
