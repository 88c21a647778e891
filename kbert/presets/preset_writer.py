"""Writes models as preset folders, atomically.

Every folder kbert writes (presets, and the exports in `kbert.checkpoints`) goes
through `staged_folder`: the files are written into a staging folder beside the
destination, flushed to disk, and then swapped in with two renames. A crash at any
point leaves the previous version or the new one; the next save or load of the folder
restores the previous version if the crash fell between the two renames, and removes
the leftovers (`kbert.presets.preset_registry.recover_interrupted_save`).

Writers of one folder exclude each other: `staged_folder` holds the folder's
`kbert.files.OutputLock` (and so does `save_preset` from its destination check on), so a
second writer fails at once with an error naming the first one's process id. A full
disk is an `OSError` (errno ENOSPC) with the previous version in place and the staging
folder removed.
"""

import contextlib
import datetime
import os
import pathlib
import secrets
import shutil

import keras

from kbert.files.atomic_write import fsync_directory
from kbert.files.atomic_write import fsync_file
from kbert.files.atomic_write import raise_if_disk_full
from kbert.files.atomic_write import write_json_atomically
from kbert.files.bounded_reader import read_json
from kbert.files.file_refused_error import FileRefusedError
from kbert.files.output_lock import OutputLock
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
    """True when `folder` holds a kbert `config.json` (not, say, a Hugging Face one).

    The file is read through the bounded reader: a `config.json` that is not a regular
    file inside the folder, is too large or nested too deeply raises its
    `FileRefusedError` (a ValueError) rather than answering False, so format detection
    reports the hostile file instead of passing it to the next format's reader.
    """
    path = pathlib.Path(folder) / CONFIG_FILE
    if not os.path.lexists(path):
        return False
    try:
        config = read_json(path, "config", folder)
    except FileRefusedError:
        raise
    except ValueError:
        return False
    return isinstance(config, dict) and {"format_version", "class_name", "backbone"} <= set(config)


def _fsync_tree(folder):
    for path in pathlib.Path(folder).rglob("*"):
        if path.is_file():
            fsync_file(path)
    for path in [*pathlib.Path(folder).rglob("*"), pathlib.Path(folder)]:
        if path.is_dir():
            fsync_directory(path)


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
        fsync_directory(folder.parent)
        return
    retired = _make_sibling(folder, retired_prefix(folder))
    os.rename(folder, retired / folder.name)
    try:
        os.rename(staging, folder)
    except BaseException:
        os.rename(retired / folder.name, folder)
        shutil.rmtree(retired, ignore_errors=True)
        raise
    fsync_directory(folder.parent)
    # Renamed before deleting: a half-deleted copy must never look restorable.
    os.rename(retired / folder.name, retired / DISCARDED_NAME)
    shutil.rmtree(retired, ignore_errors=True)


@contextlib.contextmanager
def staged_folder(folder):
    """Yields an empty staging folder that replaces `folder` when the block succeeds.

    The caller writes every file into the yielded folder. On success the files are
    flushed and the folder swapped in with `replace_folder`; on any exception the
    staging folder is deleted and `folder` is untouched (a full disk surfaces as one
    `OSError` with errno ENOSPC). The caller decides beforehand whether `folder` may be
    replaced, holding `OutputLock(folder)` from that decision on; this holds it too.

    Raises:
        OutputLockedError: when another process or thread is writing `folder`.

    Example:

    >>> with staged_folder("exports/bert") as staging:
    ...     (staging / "config.json").write_text("{}")
    """
    folder = pathlib.Path(folder).expanduser().resolve()
    with OutputLock(folder):
        recover_interrupted_save(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = _make_sibling(folder, staging_prefix(folder))
        try:
            yield staging
            _fsync_tree(staging)
            replace_folder(staging, folder)
        except BaseException as error:
            shutil.rmtree(staging, ignore_errors=True)
            raise_if_disk_full(error, folder)
            raise


def save_preset(model, folder, tokenizer=None, metadata=None):
    """Writes `model` (a `BertBackbone` or a task model) as a preset at `folder`.

    Everything is written into a temporary sibling folder, flushed, then renamed into
    place (`staged_folder`), so an interrupted save never leaves a half-written preset
    at `folder`, even when the process is killed. An existing preset at `folder` is
    replaced; an existing folder that is not a preset (no `config.json`) and is not
    empty is refused, so user files are never deleted.

    Raises:
        OutputLockedError: when another process or thread is writing `folder`.
        OSError: errno ENOSPC when the disk is full; `folder` keeps its previous version.
    """
    folder = pathlib.Path(folder).expanduser().resolve()
    with OutputLock(folder):
        _save_preset(model, folder, tokenizer, metadata)
    return folder


def _save_preset(model, folder, tokenizer, metadata):
    import kbert

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
        write_json_atomically(staging / CONFIG_FILE, config)
        write_weights(staging / WEIGHTS_FILE, weights)
        if tokenizer is not None:
            tokenizer.save_to_preset(staging)
        write_json_atomically(staging / METADATA_FILE, full_metadata)
