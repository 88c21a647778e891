"""kbert's own format, the preset folder, as plain data.

A preset folder holds:

- `config.json`: `format_version`, `class_name` (the kbert model class), `backbone`
  (the `BertConfig` fields), `task` (the task's constructor arguments), for heads
  saved as initialised `untrained_heads`, and for a subclass of a kbert model its
  `registered_name` in Keras' registry ("my_package>MyClassifier");
- `model.weights.h5`: one dataset per variable, named by its path in
  `kbert.architecture.bert_layout` (`backbone/...`, `head/...`); see `weights_file`;
- `vocab.txt` and `tokenizer_config.json` (`tokenizer_files`);
- `metadata.json`: versions and provenance, and `weights_sha256`, the digest of every
  weight (`weights_digest`) written with them: a preset whose weights no longer match it
  (a damaged disk, an edited file) is refused on load. Presets saved before the digest
  existed load without the check.

Reading checks the config, then every backbone shape in the weights file's header
against the layout the config implies, before a single value is read. Writing goes
through `kbert.files.atomic_folder.staged_folder`: written beside the destination and
swapped in, under the destination's output lock, so a crash or a full disk leaves the
previous version.
"""

import datetime
import hashlib
import logging
import os
import pathlib

import numpy as np

from kbert.architecture import bert_layout
from kbert.architecture.bert_config import BertConfig
from kbert.checkpoints.checkpoint_data import CheckpointData
from kbert.checkpoints.tokenizer_files import has_tokenizer_files
from kbert.checkpoints.tokenizer_files import read_tokenizer_folder
from kbert.checkpoints.tokenizer_files import write_tokenizer_folder
from kbert.checkpoints.weight_map import check_layer_count
from kbert.checkpoints.weights_file import check_weights_file
from kbert.checkpoints.weights_file import read_weights
from kbert.checkpoints.weights_file import write_weights
from kbert.files.atomic_write import write_json_atomically
from kbert.files.bounded_reader import read_json
from kbert.files.file_refused_error import FileRefusedError
from kbert.files.interrupted_saves import recover_interrupted_save
from kbert.files.output_lock import OutputLock
from kbert.files.atomic_folder import staged_folder

logger = logging.getLogger("kbert.checkpoints")

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.weights.h5"
METADATA_FILE = "metadata.json"
DIGEST_KEY = "weights_sha256"
PRESET_FORMAT_VERSION = 1


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


def read_preset_config(folder):
    """The parsed `config.json` of a preset folder, checked for the required keys.

    Read through `kbert.files.bounded_reader` (a regular file inside the folder, at most
    10 MB, depth-limited JSON); every error names the file.
    """
    path = pathlib.Path(folder) / CONFIG_FILE
    if not os.path.lexists(path):
        raise ValueError(f"Not a kbert preset: {str(folder)!r} has no {CONFIG_FILE}.")
    config = read_json(path, "config", folder)
    if not isinstance(config, dict):
        raise ValueError(
            f"{str(path)!r} must hold a JSON object. Received: a JSON {type(config).__name__}"
        )
    for key in ("class_name", "backbone"):
        if key not in config:
            raise ValueError(f"{str(path)!r} lacks the field `{key}`.")
    config.setdefault("task", {})
    for key, kind in (("class_name", str), ("backbone", dict), ("task", dict)):
        if not isinstance(config[key], kind):
            raise ValueError(
                f"{str(path)!r}: `{key}` must be a JSON {'string' if kind is str else 'object'}. "
                f"Received: {key}={config[key]!r:.80}"
            )
    return config


def registered_name_of(folder, config):
    """The `registered_name` of a preset's parsed `config`, or None; errors name the file."""
    name = config.get("registered_name")
    if name is not None and (not isinstance(name, str) or ">" not in name):
        raise ValueError(
            f"{str(pathlib.Path(folder) / CONFIG_FILE)!r}: `registered_name` must be a string "
            f"'package>ClassName'. Received: registered_name={name!r:.80}"
        )
    return name


def read_backbone_config(folder, config):
    """The `BertConfig` of a preset's parsed `config`; errors name its config.json."""
    path = pathlib.Path(folder) / CONFIG_FILE
    try:
        return BertConfig.from_dict(config["backbone"])
    except ValueError as error:
        raise ValueError(f"{str(path)!r}, field `backbone`: {error}") from None


def _check_backbone_shapes(folder, backbone_config, declared):
    """Refuses a weights file whose backbone does not fit the config, before reading it."""
    source = f"Preset {str(folder)!r}"
    variables = bert_layout.backbone_variables(backbone_config)
    prefix = bert_layout.BACKBONE_PREFIX
    check_layer_count(
        [name for name in declared if name.startswith(prefix)],
        backbone_config,
        f"preset {str(folder)!r}",
        CONFIG_FILE,
    )
    missing = [v.path[len(prefix) :] for v in variables if v.path not in declared]
    if missing:
        raise ValueError(f"{source} lacks weights for {missing}.")
    for variable in variables:
        shape = declared[variable.path][0]
        if shape != variable.shape:
            raise ValueError(
                f"{source}: weight `{variable.path[len(prefix) :]}` has shape {shape}, but "
                f"the model expects {variable.shape}."
            )


def _check_finite(path, weights):
    """Refuses weights holding NaN or infinity: a damaged file or a diverged training run."""
    for name, array in sorted(weights.items()):
        if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
            raise ValueError(
                f"Refusing to load {str(path)!r}: weight `{name}` holds NaN or infinite "
                "values (a damaged file or a training run that diverged)."
            )


def weights_digest(weights):
    """SHA-256 of `{name: array}` as values: names, dtypes, shapes and bytes, by name.

    Independent of how HDF5 lays the file out, so it says whether the numbers a load
    gets are the numbers that were saved.
    """
    digest = hashlib.sha256()
    for name in sorted(weights):
        array = np.ascontiguousarray(weights[name])
        digest.update(f"{name}\0{array.dtype.str}\0{array.shape}\0".encode("utf-8"))
        digest.update(array.reshape(-1).view(np.uint8))
    return digest.hexdigest()


def _check_digest(folder, weights):
    """Refuses weights that differ from the digest saved beside them, if one was."""
    path = folder / METADATA_FILE
    if not path.is_file():
        return
    metadata = read_json(path, "config", folder)
    expected = metadata.get(DIGEST_KEY) if isinstance(metadata, dict) else None
    if expected is not None and expected != weights_digest(weights):
        raise ValueError(
            f"Refusing to load {str(folder / WEIGHTS_FILE)!r}: its weights do not match the "
            f"checksum saved with them in {METADATA_FILE} (the file was changed or damaged). "
            "Convert or save the model again."
        )


def read_preset(folder, config=None):
    """The `CheckpointData` of a kbert preset folder.

    Every backbone weight must be in the file with the shape the config implies (checked
    on the file's header before any value is read); head weights are returned as stored
    (`kbert.models` decides what a missing or mis-shaped head means for the task asked).

    Args:
        folder: the preset folder.
        config: its parsed `config.json`, if already read (`read_preset_config`).
    """
    folder = pathlib.Path(folder)
    config = read_preset_config(folder) if config is None else config
    backbone_config = read_backbone_config(folder, config)
    weights_path = folder / WEIGHTS_FILE
    declared = check_weights_file(weights_path, folder)
    # The model is described only if the file holds as many numbers as the config's
    # model has.
    backbone_config.check_weights_hold(
        sum(
            int(np.prod(shape, dtype=np.int64))
            for name, (shape, _) in declared.items()
            if name.startswith(bert_layout.BACKBONE_PREFIX)
        ),
        folder / CONFIG_FILE,
    )
    _check_backbone_shapes(folder, backbone_config, declared)
    tokenizer = read_tokenizer_folder(folder) if has_tokenizer_files(folder) else None
    if tokenizer is not None and len(tokenizer.vocabulary) < backbone_config.vocabulary_size:
        logger.warning(
            "Preset %r: its vocabulary has %d tokens but its embedding table %d rows; the "
            "rows from %d up are never used.",
            str(folder),
            len(tokenizer.vocabulary),
            backbone_config.vocabulary_size,
            len(tokenizer.vocabulary),
        )
    weights = read_weights(weights_path, folder=folder)
    _check_finite(weights_path, weights)
    _check_digest(folder, weights)
    return CheckpointData(
        class_name=config["class_name"],
        config=backbone_config,
        weights=weights,
        task=dict(config["task"]),
        tokenizer=tokenizer,
        untrained_heads=tuple(config.get("untrained_heads", [])),
        registered_name=registered_name_of(folder, config),
    )


def write_preset(data, folder, metadata=None):
    """Writes `data` (a `CheckpointData`) as a preset folder at `folder`.

    Everything is written into a temporary sibling folder, flushed, then renamed into
    place (`kbert.files.atomic_folder.staged_folder`), so an interrupted save never leaves a
    half-written preset at `folder`, even when the process is killed. An existing preset
    at `folder` is replaced; an existing folder that is not a preset (no `config.json`)
    and is not empty is refused, so user files are never deleted.

    Args:
        data: the model as plain data.
        folder: the preset folder to write.
        metadata: entries for `metadata.json` besides kbert's version, the time and
            the parameter count (e.g. `source`, `keras_version`).

    Returns:
        The folder, as an absolute `pathlib.Path`.

    Raises:
        OutputLockedError: when another process or thread is writing `folder`.
        OSError: errno ENOSPC when the disk is full; `folder` keeps its previous version.
    """
    from kbert import __version__

    folder = pathlib.Path(folder).expanduser().resolve()
    with OutputLock(folder):
        recover_interrupted_save(folder)
        if folder.exists():
            if not folder.is_dir():
                raise ValueError(f"Cannot write a preset over a file: {str(folder)!r}")
            if any(folder.iterdir()) and not is_kbert_preset(folder):
                raise ValueError(
                    f"Refusing to replace {str(folder)!r}: it is not empty and not a kbert preset."
                )
        config = {
            "format_version": PRESET_FORMAT_VERSION,
            "class_name": data.class_name,
            "backbone": data.config.to_dict(),
            "task": data.task,
        }
        if data.untrained_heads:
            # Saved as they were drawn, never trained: loading says so again.
            config["untrained_heads"] = list(data.untrained_heads)
        if data.registered_name is not None:
            config["registered_name"] = data.registered_name
        full_metadata = {
            "kbert_version": __version__,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "parameter_count": data.parameter_count(),
            **(metadata or {}),
            DIGEST_KEY: weights_digest(data.weights),
        }
        with staged_folder(folder) as staging:
            write_json_atomically(staging / CONFIG_FILE, config)
            write_weights(staging / WEIGHTS_FILE, data.weights)
            if data.tokenizer is not None:
                write_tokenizer_folder(data.tokenizer, staging)
            write_json_atomically(staging / METADATA_FILE, full_metadata)
    logger.debug("Wrote %s preset to %s.", data.class_name, folder)
    return folder
