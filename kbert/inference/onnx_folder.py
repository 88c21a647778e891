"""An ONNX folder: a model's ONNX graph with its tokenizer and settings beside it.

`kbert export SRC DST --format onnx` writes it: `model.onnx` (`onnx_export.export_graph`),
and the preset's `config.json` (the architecture, the task and its label names),
`metadata.json` and tokenizer files (`vocab.txt`, its settings), so that the folder
alone tokenizes texts and runs them through ONNX Runtime. The Keras weights are left
out: the graph holds them.

Written into a staging folder renamed into place, under the destination's lock, as
every export (`kbert.checkpoints.exports`).
"""

import pathlib

from kbert.checkpoints.convert import check_destination
from kbert.checkpoints.kbert_preset import WEIGHTS_FILE
from kbert.files.atomic_folder import staged_folder
from kbert.files.output_lock import OutputLock
from kbert.inference.onnx_export import ONNX_FILE
from kbert.inference.onnx_export import export_graph


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
        with staged_folder(destination) as staging:
            model.save_to_preset(staging, tokenizer=tokenizer)
            (pathlib.Path(staging) / WEIGHTS_FILE).unlink()
            export_graph(model, pathlib.Path(staging) / ONNX_FILE, tokenizer=tokenizer)
    return destination.resolve()
