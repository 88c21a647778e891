"""Writes models as preset folders, atomically."""

import datetime
import json
import os
import pathlib
import shutil
import tempfile

import keras

from kbert.presets.preset_registry import CONFIG_FILE, METADATA_FILE, WEIGHTS_FILE
from kbert.presets.weights_file import write_weights

PRESET_FORMAT_VERSION = 1


def split_weights(model):
    """`(backbone_weights, head_weights)`: dicts of variable path -> NumPy array."""
    backbone = getattr(model, "backbone", model)
    backbone_ids = {id(variable) for variable in backbone.weights}
    backbone_weights = {v.path: keras.ops.convert_to_numpy(v) for v in backbone.weights}
    head_weights = {
        v.path: keras.ops.convert_to_numpy(v)
        for v in model.weights
        if id(v) not in backbone_ids
    }
    return backbone_weights, head_weights


def is_kbert_preset(folder):
    """True when `folder` holds a kbert `config.json` (not, say, a Hugging Face one)."""
    try:
        config = json.loads((pathlib.Path(folder) / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and {"format_version", "class_name", "backbone"} <= set(config)


def _write_json(path, value):
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=2, sort_keys=True)
        handle.write("\n")


def _fsync_tree(folder):
    for path in pathlib.Path(folder).iterdir():
        with open(path, "rb") as handle:
            os.fsync(handle.fileno())


def save_preset(model, folder, tokenizer=None, metadata=None):
    """Writes `model` (a `BertBackbone` or a task model) as a preset at `folder`.

    Everything is written into a temporary sibling folder, flushed, then renamed into
    place, so an interrupted save never leaves a half-written preset at `folder`. An
    existing preset at `folder` is replaced; an existing folder that is not a preset
    (no `config.json`) and is not empty is refused, so user files are never deleted.
    """
    import kbert

    folder = pathlib.Path(folder).expanduser().resolve()
    if folder.exists():
        if not folder.is_dir():
            raise ValueError(f"Cannot write a preset over a file: {str(folder)!r}")
        if any(folder.iterdir()) and not is_kbert_preset(folder):
            raise ValueError(
                f"Refusing to replace {str(folder)!r}: it is not empty and not a kbert preset."
            )
    folder.parent.mkdir(parents=True, exist_ok=True)

    backbone = getattr(model, "backbone", model)
    task_config = model.task_config() if hasattr(model, "task_config") else {}
    config = {
        "format_version": PRESET_FORMAT_VERSION,
        "class_name": type(model).__name__,
        "backbone": backbone.bert_config.to_dict(),
        "task": task_config,
    }
    backbone_weights, head_weights = split_weights(model)
    weights = {f"backbone/{path}": value for path, value in backbone_weights.items()}
    weights.update({f"head/{path}": value for path, value in head_weights.items()})
    full_metadata = {
        "kbert_version": kbert.__version__,
        "keras_version": keras.__version__,
        "saved_with_backend": keras.backend.backend(),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "parameter_count": int(model.count_params()),
    }
    full_metadata.update(metadata or {})

    staging = pathlib.Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
    try:
        _write_json(staging / CONFIG_FILE, config)
        write_weights(staging / WEIGHTS_FILE, weights)
        if tokenizer is not None:
            tokenizer.save_to_preset(staging)
        _write_json(staging / METADATA_FILE, full_metadata)
        _fsync_tree(staging)
        if folder.exists():
            retired = pathlib.Path(
                tempfile.mkdtemp(prefix=f".{folder.name}.old-", dir=folder.parent)
            )
            os.rename(folder, retired / folder.name)
            os.rename(staging, folder)
            shutil.rmtree(retired)
        else:
            os.rename(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder
