"""Turns a checkpoint in any format into a kbert preset, on plain data.

Sources are folders in one of the formats of `kbert.checkpoints.formats` (a Hugging Face
folder, an original Google checkpoint, a keras-hub preset, a kbert preset) or the name of
a published checkpoint (`kbert.checkpoints.named_checkpoints`, e.g. "bert-base-uncased"),
downloaded and converted once into a local cache. The checkpoint is read into
`CheckpointData` and written with the kbert-preset format's writer; no model is built.
Other model sources (built-in preset names such as "demo", `hf://` and `kaggle://`
handles) are resolved by `kbert.presets.resolve_preset`, which the `kbert convert`
command applies first.
"""

import logging
import pathlib

from kbert.checkpoints import hub_downloads
from kbert.checkpoints.cache_entry import fill_cache_entry
from kbert.checkpoints.formats import detect_format
from kbert.checkpoints.formats import holds_checkpoint
from kbert.checkpoints.formats import read_folder
from kbert.checkpoints.kbert_preset import is_kbert_preset
from kbert.checkpoints.kbert_preset import read_preset_config
from kbert.checkpoints.kbert_preset import write_preset
from kbert.checkpoints.named_checkpoints import NAMED_CHECKPOINTS
from kbert.checkpoints.named_checkpoints import cache_root
from kbert.checkpoints.named_checkpoints import download
from kbert.checkpoints.named_checkpoints import download_folder
from kbert.checkpoints.named_checkpoints import is_checkpoint_name
from kbert.checkpoints.named_checkpoints import missing_files_message
from kbert.checkpoints.named_checkpoints import named_checkpoint
from kbert.files.broken_links import broken_link_message
from kbert.files.interrupted_saves import recover_interrupted_save
from kbert.files.output_lock import OutputLock

logger = logging.getLogger("kbert.checkpoints")


def _is_folder(source):
    if not isinstance(source, (str, pathlib.PurePath)):
        return False
    return pathlib.Path(source).expanduser().is_dir()


def _check_source(source):
    """Refuses, before anything else happens, a source that is neither a folder nor a name."""
    if _is_folder(source):
        detect_format(pathlib.Path(source).expanduser())
        return
    if isinstance(source, str) and is_checkpoint_name(source):
        return
    if broken_link_message(pathlib.Path(str(source)).expanduser()) is not None:
        raise ValueError(broken_link_message(pathlib.Path(str(source)).expanduser()))
    if pathlib.Path(str(source)).expanduser().exists():
        detect_format(pathlib.Path(str(source)).expanduser())
    raise ValueError(
        f"{str(source)!r} is neither a checkpoint folder nor a published checkpoint name "
        f"({', '.join(sorted(NAMED_CHECKPOINTS)[:4])}, ...). Built-in preset names and "
        "hf:// or kaggle:// handles are resolved by kbert.presets.resolve_preset: pass the "
        "folder it returns."
    )


def read_checkpoint(source, lowercase=None):
    """`(CheckpointData, CheckpointFormat)` of a checkpoint folder or a published name.

    Args:
        source: a folder in one of `CHECKPOINT_FORMATS`, or a published checkpoint name
            (downloaded and converted once into the cache).
        lowercase: force the tokenizer's casing; None keeps the checkpoint's.
    """
    _check_source(source)
    if _is_folder(source):
        return read_folder(source, lowercase)
    return read_folder(resolve_named_checkpoint(source), lowercase)


def convert(source, destination, overwrite=False, lowercase=None):
    """Converts the checkpoint `source` into a kbert preset at `destination`.

    Every weight is checked and read before anything is written; the preset is then
    written to a temporary folder and renamed into place, so a failure leaves
    `destination` as it was. The destination's `kbert.files.OutputLock` is held from the
    destination check to the end: a concurrent conversion to the same destination raises
    `OutputLockedError` naming this one's process id.

    Args:
        source: a checkpoint folder in one of `CHECKPOINT_FORMATS`, or a published
            checkpoint name (see `kbert.checkpoints.NAMED_CHECKPOINTS`).
        destination: the preset folder to write. It must not exist or be empty, unless
            `overwrite` is set and it is a kbert preset.
        overwrite: replace an existing preset at `destination`.
        lowercase: force the tokenizer's casing (`--lowercase` / `--cased`); None keeps
            the checkpoint's (a Google checkpoint's is read from its folder name).

    Returns:
        The preset folder, as an absolute `pathlib.Path`.

    Example:

    >>> convert("downloads/bert-base-uncased", "presets/bert_base_uncased")
    PosixPath('/home/me/presets/bert_base_uncased')
    >>> convert("bert-base-cased", "presets/bert_base_cased")  # a published name
    >>> BertPretrainer.from_preset("presets/bert_base_uncased")
    """
    # Fails fast, before the destination is examined.
    _check_source(source)
    is_local = _is_folder(source)
    source_path = pathlib.Path(source).expanduser()
    destination = pathlib.Path(destination).expanduser()
    # Held from the destination check to the end of the write: a second conversion to
    # the same destination fails here instead of both passing the check.
    with OutputLock(destination):
        _check_destination(source_path, destination, overwrite, is_named=not is_local)
        data, checkpoint_format = read_checkpoint(
            source_path if is_local else source, lowercase=lowercase
        )
        origin = str(source_path.resolve()) if is_local else str(source)
        metadata = {"source": checkpoint_format.name, "source_path": origin}
        write_preset(data, destination, metadata=metadata)
    destination = destination.resolve()
    logger.info("Wrote %s preset to %s.", data.class_name, destination)
    return destination


def check_destination(destination, overwrite, is_same_kind, kind):
    """Refuses to replace anything but an empty folder, or (with `overwrite`) `kind`.

    Args:
        destination: the folder about to be written.
        overwrite: whether an existing folder of the same kind may be replaced.
        is_same_kind: folder -> whether it holds what is about to be written.
        kind: what that is, for the message ("a kbert preset").
    """
    if not destination.exists():
        return
    if not destination.is_dir():
        raise ValueError(f"The destination is a file, not a folder: {str(destination)!r}")
    if not any(destination.iterdir()):
        return
    if not overwrite:
        raise ValueError(
            f"The destination {str(destination)!r} exists and is not empty; pass "
            "overwrite=True (`--overwrite`) to replace it."
        )
    if not is_same_kind(destination):
        raise ValueError(f"Refusing to overwrite {str(destination)!r}: it is not {kind}.")


def _holds_preset_config(folder):
    # Overwriting replaces a kbert preset only: anything else may be a user's data
    # (another checkpoint also has a config.json).
    try:
        read_preset_config(folder)
    except ValueError:
        return False
    return True


def _check_destination(source, destination, overwrite, is_named=False):
    if not is_named and destination.resolve() == source.resolve():
        raise ValueError(
            f"The destination must differ from the source. Received: {str(destination)!r}"
        )
    check_destination(destination, overwrite, _holds_preset_config, "a kbert preset")


def resolve_named_checkpoint(name, cache_dir=None, online=None, source=None):
    """The local kbert preset of the published checkpoint `name`, downloading it if needed.

    Args:
        name: a key of `NAMED_CHECKPOINTS`, e.g. "bert-base-uncased", or an alias
            ("bert-uncased-L-2-H-128", "google-bert/bert-base-uncased").
        cache_dir: the cache folder; default `$KBERT_CACHE` or `~/.cache/kbert`.
        online: whether downloading is allowed. None: yes, unless `HF_HUB_OFFLINE` is set.
        source: "huggingface" or "keras-hub" to choose where to download from; None
            prefers Hugging Face (its checkpoints carry both pretraining heads).

    Returns:
        The preset folder, `<cache>/<name>`.

    Raises:
        ValueError: for an unknown name, or when the files are neither cached nor
            downloadable; the message names the files and the folder to put them in.

    Example:

    >>> folder = resolve_named_checkpoint("bert-base-uncased")
    >>> model = BertPretrainer.from_preset(folder)
    """
    entry = named_checkpoint(name)
    preset = cache_root(cache_dir) / entry.name
    recover_interrupted_save(preset)
    if is_kbert_preset(preset):
        return preset

    downloads = download_folder(entry.name, cache_dir)
    original = downloads if holds_checkpoint(downloads) else None
    if original is None:
        if online is None:
            online = not hub_downloads.offline_by_environment()
        if not online:
            raise ValueError(missing_files_message(entry, downloads, "kbert is offline"))
        original = download(entry, downloads, source)
    logger.info("Converting %s from %s into %s.", entry.name, original, preset)
    return fill_cache_entry(preset, lambda folder: convert(original, folder, overwrite=True))
