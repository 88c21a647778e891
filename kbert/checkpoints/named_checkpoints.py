"""The published BERT checkpoints by name, downloaded and converted once into a local cache.

`resolve_named_checkpoint("bert-base-uncased")` returns a kbert preset folder. The first
call downloads the checkpoint with the ecosystem's own client (`huggingface_hub` for
Hugging Face ids, `kagglehub` for keras-hub handles) and converts it; later calls
return the cached preset without touching the network.

Cache layout, under `~/.cache/kbert` (or `$KBERT_CACHE`, or `cache_dir=`):

    <cache>/<name>/              the converted kbert preset
    <cache>/downloads/<name>/    the downloaded (or hand-placed) original files

Offline (`HF_HUB_OFFLINE=1`, `online=False`, or no connection), a checkpoint whose files
are already in `downloads/<name>/` still converts; otherwise the error says which files
to put there. Any supported format may be placed there: a Hugging Face folder, Google's
original TensorFlow checkpoint, or a keras-hub preset.
"""

import dataclasses
import logging
import os
import pathlib

logger = logging.getLogger("kbert.checkpoints")

CACHE_ENVIRONMENT_VARIABLE = "KBERT_CACHE"
DEFAULT_CACHE = pathlib.Path("~/.cache/kbert")
DOWNLOADS_FOLDER = "downloads"
_TRUE_VALUES = ("1", "true", "yes", "on")

# Files fetched from a Hugging Face repository: safetensors weights when the repository
# has them (every google-bert one does), the PyTorch pickle only as a fallback.
HUGGINGFACE_FILES = ("config.json", "vocab.txt", "tokenizer_config.json", "tokenizer.json")
HUGGINGFACE_WEIGHTS = ("model.safetensors", "pytorch_model.bin")


@dataclasses.dataclass(frozen=True)
class NamedCheckpoint:
    """A published checkpoint and where it can be downloaded from.

    Attributes:
        name: kbert's name for it (Hugging Face's short name where there is one).
        description: size and casing, for listings.
        huggingface_id: the Hugging Face repository id, or None.
        keras_hub_handle: the Kaggle handle of the keras-hub preset, or None.
    """

    name: str
    description: str
    huggingface_id: str = None
    keras_hub_handle: str = None


def _entry(name, description, huggingface_id, keras_hub_preset=None):
    handle = f"keras/bert/keras/{keras_hub_preset}/3" if keras_hub_preset else None
    return NamedCheckpoint(name, description, huggingface_id, handle)


NAMED_CHECKPOINTS = {
    entry.name: entry
    for entry in (
        _entry(
            "bert-base-uncased",
            "12 layers, 768 wide, English, uncased",
            "google-bert/bert-base-uncased",
            "bert_base_en_uncased",
        ),
        _entry(
            "bert-base-cased",
            "12 layers, 768 wide, English, cased",
            "google-bert/bert-base-cased",
            "bert_base_en",
        ),
        _entry(
            "bert-large-uncased",
            "24 layers, 1024 wide, English, uncased",
            "google-bert/bert-large-uncased",
            "bert_large_en_uncased",
        ),
        _entry(
            "bert-large-cased",
            "24 layers, 1024 wide, English, cased",
            "google-bert/bert-large-cased",
            "bert_large_en",
        ),
        _entry(
            "bert-large-uncased-whole-word-masking",
            "24 layers, 1024 wide, English, uncased, whole-word masking",
            "google-bert/bert-large-uncased-whole-word-masking",
        ),
        _entry(
            "bert-large-cased-whole-word-masking",
            "24 layers, 1024 wide, English, cased, whole-word masking",
            "google-bert/bert-large-cased-whole-word-masking",
        ),
        _entry(
            "bert-base-multilingual-cased",
            "12 layers, 768 wide, 104 languages, cased",
            "google-bert/bert-base-multilingual-cased",
            "bert_base_multi",
        ),
        _entry(
            "bert-base-multilingual-uncased",
            "12 layers, 768 wide, 102 languages, uncased",
            "google-bert/bert-base-multilingual-uncased",
        ),
        _entry(
            "bert-base-chinese",
            "12 layers, 768 wide, Chinese",
            "google-bert/bert-base-chinese",
            "bert_base_zh",
        ),
        _entry(
            "bert-tiny-uncased",
            "2 layers, 128 wide, English, uncased (Turc et al.)",
            "google/bert_uncased_L-2_H-128_A-2",
            "bert_tiny_en_uncased",
        ),
        _entry(
            "bert-mini-uncased",
            "4 layers, 256 wide, English, uncased (Turc et al.)",
            "google/bert_uncased_L-4_H-256_A-4",
        ),
        _entry(
            "bert-small-uncased",
            "4 layers, 512 wide, English, uncased (Turc et al.)",
            "google/bert_uncased_L-4_H-512_A-8",
            "bert_small_en_uncased",
        ),
        _entry(
            "bert-medium-uncased",
            "8 layers, 512 wide, English, uncased (Turc et al.)",
            "google/bert_uncased_L-8_H-512_A-8",
            "bert_medium_en_uncased",
        ),
    )
}


def is_checkpoint_name(name):
    return isinstance(name, str) and name in NAMED_CHECKPOINTS


def named_checkpoint(name):
    """The `NamedCheckpoint` called `name`; a ValueError lists the known names."""
    if not is_checkpoint_name(name):
        raise ValueError(
            f"Unknown checkpoint name {name!r}. Known: {', '.join(sorted(NAMED_CHECKPOINTS))}"
        )
    return NAMED_CHECKPOINTS[name]


def cache_root(cache_dir=None):
    """The cache folder: `cache_dir`, else `$KBERT_CACHE`, else `~/.cache/kbert`."""
    if cache_dir is None:
        cache_dir = os.environ.get(CACHE_ENVIRONMENT_VARIABLE) or DEFAULT_CACHE
    return pathlib.Path(cache_dir).expanduser()


def download_folder(name, cache_dir=None):
    """Where the original files of the checkpoint `name` are kept (or are to be placed)."""
    return cache_root(cache_dir) / DOWNLOADS_FOLDER / named_checkpoint(name).name


def _offline_by_environment():
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE_VALUES


def resolve_named_checkpoint(name, cache_dir=None, online=None, source=None):
    """The local kbert preset of the published checkpoint `name`, downloading it if needed.

    Args:
        name: a key of `NAMED_CHECKPOINTS`, e.g. "bert-base-uncased".
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
    from kbert.checkpoints.convert import convert, detect_format
    from kbert.presets.preset_registry import recover_interrupted_save
    from kbert.presets.preset_writer import is_kbert_preset

    entry = named_checkpoint(name)
    preset = cache_root(cache_dir) / entry.name
    recover_interrupted_save(preset)
    if is_kbert_preset(preset):
        return preset

    downloads = download_folder(entry.name, cache_dir)
    original = downloads if _holds_checkpoint(downloads, detect_format) else None
    if original is None:
        if online is None:
            online = not _offline_by_environment()
        if not online:
            raise ValueError(_missing_files_message(entry, downloads, "kbert is offline"))
        original = _download(entry, downloads, source)
    logger.info("Converting %s from %s into %s.", entry.name, original, preset)
    convert(original, preset, overwrite=True)
    return preset


def _holds_checkpoint(folder, detect_format):
    if not folder.is_dir():
        return False
    try:
        detect_format(folder)
    except ValueError:
        return False
    return True


def _download(entry, downloads, source):
    if source not in (None, "huggingface", "keras-hub"):
        raise ValueError(
            f"`source` must be 'huggingface', 'keras-hub' or None. Received: source={source!r}"
        )
    use_huggingface = entry.huggingface_id is not None and source in (None, "huggingface")
    use_keras_hub = entry.keras_hub_handle is not None and source in (None, "keras-hub")
    if source is not None and not (use_huggingface or use_keras_hub):
        raise ValueError(f"{entry.name} is not published on {source}.")
    try:
        if use_huggingface:
            return _download_huggingface(entry, downloads)
        return _download_keras_hub(entry)
    except _connection_errors() as error:
        raise ValueError(
            _missing_files_message(entry, downloads, f"the download failed: {error}")
        ) from None


def _download_huggingface(entry, downloads):
    from huggingface_hub import snapshot_download

    logger.info("Downloading %s from Hugging Face (%s).", entry.name, entry.huggingface_id)
    downloads.mkdir(parents=True, exist_ok=True)
    for weights in HUGGINGFACE_WEIGHTS:
        snapshot_download(
            entry.huggingface_id,
            allow_patterns=[*HUGGINGFACE_FILES, weights],
            local_dir=downloads,
        )
        if (downloads / weights).is_file():
            return downloads
    raise ValueError(
        f"Hugging Face repository {entry.huggingface_id} has none of {list(HUGGINGFACE_WEIGHTS)}."
    )


def _download_keras_hub(entry):
    import kagglehub

    logger.info("Downloading %s from Kaggle (%s).", entry.name, entry.keras_hub_handle)
    # kagglehub keeps its own cache; the preset is converted from there.
    return pathlib.Path(kagglehub.model_download(entry.keras_hub_handle))


def _connection_errors():
    """Exceptions that mean "could not download", from the clients that are installed."""
    errors = [OSError, ConnectionError, TimeoutError]
    try:
        from huggingface_hub.errors import EntryNotFoundError

        errors.append(EntryNotFoundError)
    except ImportError:
        pass
    try:
        import httpx

        errors.append(httpx.HTTPError)
    except ImportError:
        pass
    try:
        from kagglehub import exceptions

        errors += [exceptions.BackendError, exceptions.NotFoundError, exceptions.KaggleApiHTTPError]
    except (ImportError, AttributeError):
        pass
    return tuple(errors)


def _missing_files_message(entry, downloads, reason):
    lines = [
        f"Checkpoint {entry.name!r} is not in the cache and {reason}.",
        (
            f"To use it offline, place its files in {downloads} (create the folder), "
            "then run again. Any one of:"
        ),
    ]
    if entry.huggingface_id:
        lines.append(
            f"  - from https://huggingface.co/{entry.huggingface_id}: config.json, "
            "model.safetensors (or pytorch_model.bin), vocab.txt, tokenizer_config.json"
        )
    if entry.keras_hub_handle:
        lines.append(
            f"  - the keras-hub preset https://www.kaggle.com/models/{entry.keras_hub_handle} "
            "(config.json, model.weights.h5, tokenizer.json, assets/tokenizer/vocabulary.txt)"
        )
    lines.append(
        "  - Google's original checkpoint: bert_config.json, bert_model.ckpt.index, "
        "bert_model.ckpt.data-00000-of-00001, vocab.txt"
    )
    return "\n".join(lines)
