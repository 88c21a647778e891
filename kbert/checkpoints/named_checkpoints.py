"""The published BERT checkpoints by name, and where they are downloaded from and cached.

`kbert.checkpoints.resolve_named_checkpoint("bert-base-uncased")` returns a kbert preset
folder. The first call downloads the checkpoint with the ecosystem's own client
(`huggingface_hub` for Hugging Face ids, `kagglehub` for keras-hub handles) and converts
it; later calls return the cached preset without touching the network.

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

from kbert.checkpoints import hub_downloads

logger = logging.getLogger("kbert.checkpoints")

CACHE_ENVIRONMENT_VARIABLE = "KBERT_CACHE"
DEFAULT_CACHE = pathlib.Path("~/.cache/kbert")
DOWNLOADS_FOLDER = "downloads"

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
        aliases: other names that mean the same checkpoint.
    """

    name: str
    description: str
    huggingface_id: str = None
    keras_hub_handle: str = None
    aliases: tuple = ()


def _entry(name, description, huggingface_id, keras_hub_preset=None, aliases=()):
    # keras-hub's preset name is an alias too: its weights are the same published ones
    # (converted from Google's checkpoints), so `from_preset("bert_base_en_uncased")`
    # works as keras-hub users type it.
    handle = f"keras/bert/keras/{keras_hub_preset}/3" if keras_hub_preset else None
    aliases = (*aliases, keras_hub_preset) if keras_hub_preset else tuple(aliases)
    return NamedCheckpoint(name, description, huggingface_id, handle, aliases)


# Google's 24 smaller BERTs (Turc et al., 2019, "Well-Read Students Learn Better"): every
# combination of these depths and widths, uncased English, trained with the original
# recipe. Four have names of their own in Google's README.
SMALL_BERT_LAYERS = (2, 4, 6, 8, 10, 12)
SMALL_BERT_WIDTHS = (128, 256, 512, 768)
_SMALL_BERT_NAMES = {
    (2, 128): ("bert-tiny-uncased", "bert_tiny_en_uncased"),
    (4, 256): ("bert-mini-uncased", None),
    (4, 512): ("bert-small-uncased", "bert_small_en_uncased"),
    (8, 512): ("bert-medium-uncased", "bert_medium_en_uncased"),
}


def small_bert_name(layers, width):
    """The systematic name of a small BERT, e.g. "bert-uncased-L-2-H-128"."""
    return f"bert-uncased-L-{layers}-H-{width}"


def _small_berts():
    for layers in SMALL_BERT_LAYERS:
        for width in SMALL_BERT_WIDTHS:
            systematic = small_bert_name(layers, width)
            short, keras_hub_preset = _SMALL_BERT_NAMES.get((layers, width), (None, None))
            heads = width // 64
            yield _entry(
                short or systematic,
                f"{layers} layers, {width} wide, {heads} heads, English, uncased (Turc et al.)",
                f"google/bert_uncased_L-{layers}_H-{width}_A-{heads}",
                keras_hub_preset,
                aliases=(systematic,) if short else (),
            )


_ENTRIES = (
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
    *_small_berts(),
)

# Every name and alias -> its checkpoint. Hugging Face repository ids are aliases too, so
# that "google-bert/bert-base-uncased" works as transformers users type it.
NAMED_CHECKPOINTS = {entry.name: entry for entry in _ENTRIES}
CHECKPOINT_ALIASES = {
    alias: entry
    for entry in _ENTRIES
    for alias in (*entry.aliases, entry.huggingface_id)
    if alias
}


def is_checkpoint_name(name):
    """Whether `name` is a published checkpoint's name, alias or Hugging Face id."""
    return isinstance(name, str) and (name in NAMED_CHECKPOINTS or name in CHECKPOINT_ALIASES)


def named_checkpoint(name):
    """The `NamedCheckpoint` called `name`; a ValueError lists the known names."""
    if not is_checkpoint_name(name):
        raise ValueError(
            f"Unknown checkpoint name {name!r}. Known: {', '.join(sorted(NAMED_CHECKPOINTS))}"
        )
    return NAMED_CHECKPOINTS.get(name) or CHECKPOINT_ALIASES[name]


def cache_root(cache_dir=None):
    """The cache folder: `cache_dir`, else `$KBERT_CACHE`, else `~/.cache/kbert`."""
    if cache_dir is None:
        cache_dir = os.environ.get(CACHE_ENVIRONMENT_VARIABLE) or DEFAULT_CACHE
    return pathlib.Path(cache_dir).expanduser()


def download_folder(name, cache_dir=None):
    """Where the original files of the checkpoint `name` are kept (or are to be placed)."""
    return cache_root(cache_dir) / DOWNLOADS_FOLDER / named_checkpoint(name).name


def download(entry, downloads, source=None):
    """Downloads the checkpoint `entry` (a `NamedCheckpoint`); returns the folder of its files.

    Args:
        entry: the checkpoint.
        downloads: where Hugging Face files go (kagglehub keeps its own cache).
        source: "huggingface", "keras-hub" or None (Hugging Face when published there).

    Raises:
        ValueError: for an unknown `source`, or when the download fails; the message
            says which files to place where to go on offline.
    """
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
            return hub_downloads.download_huggingface(
                entry.huggingface_id,
                downloads,
                metadata_patterns=HUGGINGFACE_FILES,
                weight_patterns=[(weights,) for weights in HUGGINGFACE_WEIGHTS],
            )
        # kagglehub keeps its own cache; the preset is converted from there.
        return hub_downloads.download_kaggle(entry.keras_hub_handle)
    except hub_downloads.DownloadFailed as error:
        raise ValueError(missing_files_message(entry, downloads, str(error))) from None


def missing_files_message(entry, downloads, reason):
    """Why `entry` is not available and which files to place in `downloads` to use it.

    Three lines at most: the reason, then the files of each format that works there.
    """
    alternatives = []
    if entry.huggingface_id:
        alternatives.append(
            f"from https://huggingface.co/{entry.huggingface_id}: config.json, "
            "model.safetensors (or pytorch_model.bin), vocab.txt, tokenizer_config.json"
        )
    if entry.keras_hub_handle:
        alternatives.append(
            f"the keras-hub preset https://www.kaggle.com/models/{entry.keras_hub_handle} "
            "(config.json, model.weights.h5, tokenizer.json, assets/tokenizer/vocabulary.txt)"
        )
    alternatives.append(
        "Google's original checkpoint (bert_config.json, bert_model.ckpt.index, "
        "bert_model.ckpt.data-00000-of-00001, vocab.txt)"
    )
    first, *others = alternatives
    lines = [
        f"Checkpoint {entry.name!r} is not in the cache and {reason}.",
        f"To use it offline, place its files in {downloads} (create the folder), then run "
        f"again: {first}" + (";" if others else "."),
    ]
    if others:
        lines.append("or " + "; or ".join(others) + ".")
    return "\n".join(lines)
