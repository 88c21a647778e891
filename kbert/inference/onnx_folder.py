"""An ONNX folder: a model's ONNX graph with its tokenizer and settings beside it.

`kbert export SRC DST --format onnx` writes it: `model.onnx` (`onnx_export.export_graph`),
and the preset's `config.json` (the architecture, the task and its label names),
`metadata.json` and tokenizer files (`vocab.txt`, its settings), so that the folder
alone tokenizes texts and runs them through ONNX Runtime. The Keras weights are left
out: the graph holds them, and `metadata.json` records the graph's SHA-256
(`onnx_sha256`, `onnx_digest`) where a preset records its weights' digest.

Written into a staging folder renamed into place, under the destination's lock, as
every export (`kbert.checkpoints.exports`).
"""

import dataclasses
import hashlib
import math
import pathlib

from kbert.checkpoints.convert import check_destination
from kbert.checkpoints.kbert_preset import DIGEST_KEY
from kbert.checkpoints.kbert_preset import METADATA_FILE
from kbert.checkpoints.kbert_preset import WEIGHTS_FILE
from kbert.checkpoints.kbert_preset import write_preset
from kbert.files.atomic_write import check_free_space
from kbert.files.atomic_write import write_json_atomically
from kbert.files.bounded_reader import open_checked
from kbert.files.bounded_reader import read_json
from kbert.files.atomic_folder import staged_folder
from kbert.files.output_lock import OutputLock
from kbert.inference.onnx_export import DISK_FULL_ERRNOS
from kbert.inference.onnx_export import ONNX_FILE
from kbert.inference.onnx_export import export_graph

ONNX_DIGEST_KEY = "onnx_sha256"


def is_onnx_folder(folder):
    """True when `folder` holds an exported `model.onnx` with its `config.json`."""
    folder = pathlib.Path(folder)
    return (folder / ONNX_FILE).is_file() and (folder / "config.json").is_file()


def write_onnx_folder(model, destination, overwrite=False, tokenizer=None):
    """Writes `model` (a kbert task model or backbone) as an ONNX folder.

    Args:
        model: the model; float32.
        destination: the folder. It must not exist or be empty, unless `overwrite`
            is set and it holds an ONNX folder.
        overwrite: replace an existing ONNX folder at `destination`.
        tokenizer: written beside the graph; defaults to `model.tokenizer`.

    Returns:
        The folder written, as an absolute `pathlib.Path`.
    """
    destination = pathlib.Path(destination).expanduser()
    if tokenizer is None:
        tokenizer = getattr(model, "tokenizer", None)
    with OutputLock(destination):
        check_destination(destination, overwrite, is_onnx_folder, "an ONNX folder")
        check_free_space(destination.parent, _needed_bytes(model), destination)
        with staged_folder(destination) as staging:
            try:
                _write_files(model, pathlib.Path(staging), tokenizer)
            except OSError as error:
                if error.errno not in DISK_FULL_ERRNOS:
                    raise
                # The file it names is in a staging folder, gone by now: the folder is
                # what the user asked for.
                raise OSError(error.errno, f"No space left on the device while writing "
                                           f"{str(destination)!r}") from None
    return destination.resolve()


def _needed_bytes(model):
    """About the most room an export of `model` takes: the graph, which holds the
    weights."""
    return sum(4 * math.prod(int(size) for size in variable.shape)
                   for variable in model.weights)


def _write_files(model, staging, tokenizer):
    _write_preset_without_weights(model, staging, tokenizer)
    export_graph(model, staging / ONNX_FILE, tokenizer=tokenizer)
    metadata = read_json(staging / METADATA_FILE, "config", staging)
    metadata.pop(DIGEST_KEY, None)  # The weights file it names is not here.
    metadata[ONNX_DIGEST_KEY] = onnx_digest(staging / ONNX_FILE)
    write_json_atomically(staging / METADATA_FILE, metadata)


def _write_preset_without_weights(model, folder, tokenizer):
    """The model's preset files but its weights (the graph holds them): `config.json`,
    `metadata.json` (its parameter count the model's) and the tokenizer's files. The
    preset writer is handed no arrays, so nothing of the weights' size is written."""
    import keras

    data = model.to_checkpoint_data(tokenizer)
    metadata = {
        "keras_version": keras.__version__,
        "saved_with_backend": keras.backend.backend(),
        "parameter_count": data.parameter_count(),
    }
    write_preset(dataclasses.replace(data, weights={}), folder, metadata=metadata)
    (folder / WEIGHTS_FILE).unlink()


def onnx_digest(path):
    """SHA-256 of the graph file `path`, as `metadata.json` records it."""
    digest = hashlib.sha256()
    with open_checked(path, None) as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
