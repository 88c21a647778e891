"""Writes models as preset folders, atomically.

Every folder kbert writes (presets, and the exports in `kbert.checkpoints`) goes
through `staged_folder`: the files are written into a staging folder beside the
destination, flushed to disk, and then swapped in with two renames. A crash at any
point leaves the previous version or the new one; the next save or load of the folder
restores the previous version if the crash fell between the two renames, and removes
the leftovers (`kbert.presets.preset_registry.recover_interrupted_save`).
"""

import contextlib
import datetime
import json
import os
import pathlib
import secrets
import shutil

import keras

from kbert.presets.preset_registry import (
    CONFIG_FILE,
    DISCARDED_NAME,
    METADATA_FILE,
    WEIGHTS_FILE,
    recover_interrupted_save,
    retired_prefix,
    staging_prefix,
)
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
    for path in pathlib.Path(folder).rglob("*"):
        if path.is_file():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())
    for path in [*pathlib.Path(folder).rglob("*"), pathlib.Path(folder)]:
        if path.is_dir():
            _fsync_directory(path)


def _fsync_directory(folder):
    # Makes renames inside `folder` durable. Windows cannot open a folder this way, and
    # its renames are already journaled.
    if os.name == "nt":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _make_sibling(folder, prefix):
    # os.mkdir rather than tempfile.mkdtemp: the folder becomes the user's preset, so it
    # gets the umask's permissions, not mkdtemp's owner-only ones.
    while True:
        path = folder.parent / f"{prefix}{secrets.token_hex(4)}"
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        return path


def replace_folder(staging, folder):
    """Moves the complete folder `staging` to `folder`, replacing what is there.

    `folder`'s previous version is renamed into a retired sibling first and deleted
    only after the new version is in place, so between the two renames a complete copy
    always exists under a name `recover_interrupted_save` knows.
    """
    staging, folder = pathlib.Path(staging), pathlib.Path(folder)
    if not folder.exists():
        os.rename(staging, folder)
        _fsync_directory(folder.parent)
        return
    retired = _make_sibling(folder, retired_prefix(folder))
    os.rename(folder, retired / folder.name)
    try:
        os.rename(staging, folder)
    except BaseException:
        os.rename(retired / folder.name, folder)
        shutil.rmtree(retired, ignore_errors=True)
        raise
    _fsync_directory(folder.parent)
    # Renamed before deleting: a half-deleted copy must never look restorable.
    os.rename(retired / folder.name, retired / DISCARDED_NAME)
    shutil.rmtree(retired, ignore_errors=True)


@contextlib.contextmanager
def staged_folder(folder):
    """Yields an empty staging folder that replaces `folder` when the block succeeds.

    The caller writes every file into the yielded folder. On success the files are
    flushed and the folder swapped in with `replace_folder`; on any exception the
    staging folder is deleted and `folder` is untouched. The caller decides beforehand
    whether `folder` may be replaced.

    Example:

    >>> with staged_folder("exports/bert") as staging:
    ...     (staging / "config.json").write_text("{}")
    """
    folder = pathlib.Path(folder).expanduser().resolve()
    recover_interrupted_save(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = _make_sibling(folder, staging_prefix(folder))
    try:
        yield staging
        _fsync_tree(staging)
        replace_folder(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def save_preset(model, folder, tokenizer=None, metadata=None):
    """Writes `model` (a `BertBackbone` or a task model) as a preset at `folder`.

    Everything is written into a temporary sibling folder, flushed, then renamed into
    place (`staged_folder`), so an interrupted save never leaves a half-written preset
    at `folder`, even when the process is killed. An existing preset at `folder` is
    replaced; an existing folder that is not a preset (no `config.json`) and is not
    empty is refused, so user files are never deleted.
    """
    import kbert

    folder = pathlib.Path(folder).expanduser().resolve()
    recover_interrupted_save(folder)
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
    untrained = list(getattr(model, "freshly_initialized_heads", []) or [])
    if untrained:
        # Saved as they were drawn, never trained: loading says so again.
        config["untrained_heads"] = untrained
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

    with staged_folder(folder) as staging:
        _write_json(staging / CONFIG_FILE, config)
        write_weights(staging / WEIGHTS_FILE, weights)
        if tokenizer is not None:
            tokenizer.save_to_preset(staging)
        _write_json(staging / METADATA_FILE, full_metadata)
    return folder
