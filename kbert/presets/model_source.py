"""One resolver for every model source: what `from_preset`, `--model`, SRC and the app take.

`resolve_preset(source)` turns any of these into the folder of a kbert preset:

| source                                   | becomes                                            |
|------------------------------------------|----------------------------------------------------|
| a kbert preset folder                    | itself                                             |
| a built-in name: `demo`                  | the preset inside the package                      |
| a published name: `bert-base-uncased`,   | downloaded once, converted into                    |
| `bert-tiny-uncased`, `google-bert/...`   | `<cache>/<name>` (`kbert.checkpoints.NAMED_CHECKPOINTS`) |
| a Hugging Face, Google or keras-hub      | converted once into `<cache>/converted/<hash>`,   |
| checkpoint folder                        | keyed by the hash of its files' contents           |
| `hf://owner/name`                        | downloaded with huggingface_hub, converted once    |
| `kaggle://owner/model/framework/variant` | downloaded with kagglehub, converted once          |
| a `.keras` file (`model.save("x.keras")`) | checked, converted once into                      |
|                                          | `<cache>/converted/keras-<hash>` (`keras_archive`) |

The cache is `$KBERT_CACHE`, else `~/.cache/kbert` (or `cache_dir=`). Offline
(`HF_HUB_OFFLINE=1` or `online=False`), what is already in the cache still resolves.
When nothing matches, the error (three lines at most) says what the source is not and
names the forms; `kbert convert --help` lists them (`ACCEPTED_FORMS`) with every name.
"""

import difflib
import logging
import os
import pathlib
import re

from kbert.checkpoints.kbert_preset import WEIGHTS_FILE
from kbert.checkpoints.kbert_preset import is_kbert_preset
from kbert.files.broken_links import broken_link_message
from kbert.files.interrupted_saves import recover_interrupted_save
from kbert.presets.preset_registry import BUILTIN_PRESETS

logger = logging.getLogger("kbert.presets")

HUGGINGFACE_SCHEME = "hf://"
KAGGLE_SCHEME = "kaggle://"
CONVERTED_FOLDER = "converted"
# Inside the cache: converted hub models under these folders, their downloads under
# `downloads/<folder>/...`.
HUGGINGFACE_FOLDER = "hf"
KAGGLE_FOLDER = "kaggle"
_HUGGINGFACE_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_KAGGLE_HANDLE = re.compile(r"^[\w.-]+/[\w.-]+/[\w.-]+/[\w.-]+(?:/\d+)?$")

ACCEPTED_FORMS = (
    "a kbert preset folder",
    "a Hugging Face, Google (google-research/bert) or keras-hub checkpoint folder, "
    "converted once into the cache",
    f"a built-in preset name ({', '.join(sorted(BUILTIN_PRESETS))})",
    "a published checkpoint name such as bert-base-uncased or bert-tiny-uncased "
    "(listed below)",
    "hf://owner/name (a Hugging Face repository)",
    "kaggle://owner/model/framework/variation[/version] (a keras-hub preset on Kaggle)",
    "a .keras file written by model.save (checked, converted once into the cache)",
)


def resolve_preset(source, cache_dir=None, online=None):
    """The folder of a kbert preset for `source`, converting or downloading it once.

    An interrupted save to a local folder is recovered first
    (`kbert.files.recover_interrupted_save`).

    Args:
        source: a folder (str or path-like), a built-in or published name, or an
            `hf://` / `kaggle://` handle; see the module docstring.
        cache_dir: the cache folder; default `$KBERT_CACHE` or `~/.cache/kbert`.
        online: whether downloading is allowed. None: yes, unless `HF_HUB_OFFLINE` is set.

    Returns:
        A `pathlib.Path` to a kbert preset folder.

    Raises:
        ValueError: when `source` is none of the accepted forms (the message lists what
            was tried), or its files are incomplete, or a download is needed but fails.

    Examples:

    >>> resolve_preset("demo")
    PosixPath('.../kbert/presets/builtin/demo')
    >>> resolve_preset("downloads/bert-base-uncased")  # a Hugging Face folder
    PosixPath('/home/me/.cache/kbert/converted/5f0c...')
    """
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
        is_path = True
    elif isinstance(source, str):
        is_path = False
    else:
        raise ValueError(
            "`preset` must be a folder path, a preset or checkpoint name, or an hf:// or "
            f"kaggle:// handle. Received: {source!r} of type {type(source).__name__}"
        )
    if not is_path and source.startswith(HUGGINGFACE_SCHEME):
        return _from_huggingface(source[len(HUGGINGFACE_SCHEME) :], cache_dir, online)
    if not is_path and source.startswith(KAGGLE_SCHEME):
        return _from_kaggle(source[len(KAGGLE_SCHEME) :], cache_dir, online)
    path = pathlib.Path(source).expanduser()
    recover_interrupted_save(path)
    if path.is_dir():
        return _local_folder(path, cache_dir)
    from kbert.checkpoints.keras_archive import is_keras_archive

    if is_keras_archive(path):
        return _keras_archive(path, cache_dir)
    if path.exists():
        raise ValueError(
            "A model must be a folder, a .keras file or a name. Received a file: "
            f"{str(path)!r}"
        )
    if broken_link_message(path) is not None:
        raise ValueError(broken_link_message(path))
    if not is_path and source in BUILTIN_PRESETS:
        return pathlib.Path(BUILTIN_PRESETS[source])
    from kbert.checkpoints import named_checkpoints
    from kbert.checkpoints.convert import resolve_named_checkpoint

    if not is_path and named_checkpoints.is_checkpoint_name(source):
        return resolve_named_checkpoint(source, cache_dir, online)
    raise ValueError(_unknown_source_message(source, path))


def is_local_source(source):
    """Whether `source` names an existing local folder (rather than a name or handle)."""
    if isinstance(source, str) and source.startswith((HUGGINGFACE_SCHEME, KAGGLE_SCHEME)):
        return False
    return pathlib.Path(source).expanduser().is_dir()


def checkpoint_source(source):
    """`source` as `kbert.checkpoints` reads it (`convert`, the exports).

    A folder or a published checkpoint name is returned as given; any other model
    source (a built-in name, an `hf://` or `kaggle://` handle) is resolved to its preset
    folder.
    """
    from kbert.checkpoints.named_checkpoints import is_checkpoint_name

    if is_local_source(source) or is_checkpoint_name(source):
        return source
    return resolve_preset(source)


def _local_folder(path, cache_dir):
    if is_kbert_preset(path):
        return path
    from kbert.checkpoints.formats import detect_format

    try:
        checkpoint_format = detect_format(path)
    except ValueError:
        if (path / WEIGHTS_FILE).is_file():
            # Laid out as a kbert preset: its own reader says what is wrong with it.
            from kbert.checkpoints.kbert_preset import read_preset_config

            read_preset_config(path)
        from kbert.checkpoints.formats import folder_contents

        raise ValueError(
            f"{str(path)!r} is not a model folder: a model folder is a kbert preset, or a "
            "Hugging Face, Google or keras-hub checkpoint (`kbert convert --help` lists "
            f"the files of each). The folder holds: {folder_contents(path)}."
        ) from None
    from kbert.presets.converted_folder_keys import content_key

    converted_folder = _cache(cache_dir) / CONVERTED_FOLDER
    converted = converted_folder / content_key(path, converted_folder)
    recover_interrupted_save(converted)
    if is_kbert_preset(converted):
        return converted
    logger.info(
        "%s is a %s checkpoint: converting it once into %s (later loads read that; "
        "`kbert convert` writes a preset where you choose).",
        path,
        checkpoint_format.name,
        converted,
    )
    return _convert(path, converted)


def _keras_archive(path, cache_dir):
    from kbert.checkpoints.cache_entry import fill_cache_entry
    from kbert.checkpoints.kbert_preset import write_preset
    from kbert.checkpoints.keras_archive import archive_digest
    from kbert.checkpoints.keras_archive import read_keras_archive

    digest = archive_digest(path)
    converted = _cache(cache_dir) / CONVERTED_FOLDER / f"keras-{digest[:16]}"

    def write(folder):
        logger.info("Converting the .keras file %s once into %s.", path, folder)
        # Keras writes no checksum of an archive's weights, so a re-zipped archive with
        # other weights cannot be told from its original here: the preset records the
        # archive's own digest, to compare with one its publisher gives.
        metadata = {"source": str(path), "source_sha256": digest}
        write_preset(read_keras_archive(path), folder, metadata=metadata)

    # Several processes opening the same archive at once: one converts, the others wait.
    return fill_cache_entry(converted, write)


def _convert(original, preset):
    from kbert.checkpoints.cache_entry import fill_cache_entry
    from kbert.checkpoints.convert import convert

    if is_kbert_preset(original):
        return pathlib.Path(original)
    # Another process converting the same model is waited for, not refused.
    return fill_cache_entry(preset, lambda folder: convert(original, folder, overwrite=True))


def _from_huggingface(repo_id, cache_dir, online):
    from kbert.checkpoints import hub_downloads

    if not _HUGGINGFACE_ID.match(repo_id):
        raise ValueError(
            "A Hugging Face handle is hf://owner/name, e.g. hf://google-bert/bert-base-uncased. "
            f"Received: {HUGGINGFACE_SCHEME}{repo_id}"
        )
    owner, name = repo_id.split("/")
    preset = _cache(cache_dir) / HUGGINGFACE_FOLDER / owner / name
    recover_interrupted_save(preset)
    if is_kbert_preset(preset):
        return preset
    downloads = _cache(cache_dir) / "downloads" / HUGGINGFACE_FOLDER / owner / name
    from kbert.checkpoints.formats import holds_checkpoint

    if not holds_checkpoint(downloads):
        if not _online(online):
            raise ValueError(
                f"hf://{repo_id} is not in the cache and kbert is offline. Put the "
                f"repository's files (config.json, the weights, vocab.txt) in {downloads}, "
                "or go online."
            )
        try:
            hub_downloads.download_huggingface(repo_id, downloads)
        except hub_downloads.DownloadFailed as error:
            raise ValueError(
                f"Cannot fetch hf://{repo_id}: {error}.\nTo use it offline, put the "
                f"repository's files (config.json, the weights, vocab.txt) in {downloads}, "
                "then run again."
            ) from None
    logger.info("Converting hf://%s once into %s.", repo_id, preset)
    return _convert(downloads, preset)


def _from_kaggle(handle, cache_dir, online):
    from kbert.checkpoints import hub_downloads

    if not _KAGGLE_HANDLE.match(handle):
        raise ValueError(
            "A Kaggle handle is kaggle://owner/model/framework/variation[/version], e.g. "
            f"kaggle://keras/bert/keras/bert_tiny_en_uncased/3. Received: {KAGGLE_SCHEME}{handle}"
        )
    preset = _cache(cache_dir) / KAGGLE_FOLDER / pathlib.Path(*handle.split("/"))
    recover_interrupted_save(preset)
    if is_kbert_preset(preset):
        return preset
    # kagglehub has no folder kbert could point at in advance; a downloaded copy of the
    # preset is a keras-hub folder, which is a model source of its own.
    offline_hint = (
        "To use it offline, download the preset from https://www.kaggle.com/models/"
        f"{'/'.join(handle.split('/')[:4])} and give its folder as the model."
    )
    if not _online(online):
        raise ValueError(
            f"kaggle://{handle} is not in the cache and kbert is offline.\n{offline_hint}"
        )
    try:
        original = hub_downloads.download_kaggle(handle)
    except hub_downloads.DownloadFailed as error:
        raise ValueError(f"Cannot fetch kaggle://{handle}: {error}.\n{offline_hint}") from None
    logger.info("Converting kaggle://%s once into %s.", handle, preset)
    return _convert(original, preset)


def _online(online):
    from kbert.checkpoints import hub_downloads

    return not hub_downloads.offline_by_environment() if online is None else bool(online)


def _cache(cache_dir):
    from kbert.checkpoints.named_checkpoints import cache_root

    return cache_root(cache_dir)


# --- Errors -----------------------------------------------------------------------------


def _unknown_source_message(source, path):
    """At most three lines: what `source` is not, a likely fix, the forms in one line."""
    from kbert.checkpoints.named_checkpoints import CHECKPOINT_ALIASES
    from kbert.checkpoints.named_checkpoints import NAMED_CHECKPOINTS

    builtin = ", ".join(sorted(BUILTIN_PRESETS))
    forms = (
        f"A model is a kbert preset folder, a checkpoint folder (Hugging Face, Google, "
        f"keras-hub), a .keras file, a built-in preset ({builtin}), a published checkpoint name, "
        "hf://owner/name or kaggle://owner/model/framework/variation; `kbert convert "
        "--help` lists every form and name."
    )
    text = str(source)
    if text.startswith((".", "~", os.sep)) or (os.altsep and os.altsep in text):
        # Written as a path: the folder is what is missing, not a name.
        return "\n".join([f"No model at {text!r}: there is no such folder.", forms])
    names = sorted(set(BUILTIN_PRESETS) | set(NAMED_CHECKPOINTS) | set(CHECKPOINT_ALIASES))
    # An alias that comes close is named by kbert's own name, e.g. keras-hub's fine-tuned
    # "bert_tiny_en_uncased_sst2" -> "bert-tiny-uncased (bert_tiny_en_uncased)".
    close = []
    for name in difflib.get_close_matches(text, names, n=3, cutoff=0.6):
        own = CHECKPOINT_ALIASES[name].name if name in CHECKPOINT_ALIASES else name
        if not any(suggested.split(" (")[0] == own for suggested in close):
            close.append(own if own == name else f"{own} ({name})")
    lines = [
        f"Unknown preset {source!r}: there is no folder {str(path.absolute())!r}, and it is "
        f"not a built-in preset ({builtin}) or a published checkpoint name."
    ]
    hints = []
    if close:
        hints.append(f"Did you mean: {', '.join(close)}?")
    if _HUGGINGFACE_ID.match(text):
        hints.append(f"For the Hugging Face repository {source}, write hf://{source}.")
    if hints:
        lines.append(" ".join(hints))
    return "\n".join(lines + [forms])
