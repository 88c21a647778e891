"""Turns a checkpoint in another format into a kbert preset, detecting the format.

Each format is one `CheckpointFormat` row in `CHECKPOINT_FORMATS`: a cheap detector that
looks at file names (and at most a small JSON file), and a loader returning
`(model, tokenizer)`. `convert`, `load_checkpoint` and the CLI pick up a new row
unchanged. Detectors run in table order and the first match wins, so a more specific
format goes before a more general one.

Sources are folders in one of the formats (a Hugging Face folder, an original Google
checkpoint, a keras-hub preset, a kbert preset), or anything else
`kbert.presets.resolve_preset` takes: a built-in preset name ("demo"), the name of a
published checkpoint (`kbert.checkpoints.named_checkpoints`, e.g. "bert-base-uncased"),
downloaded and converted once into a local cache, or an `hf://` / `kaggle://` handle.
"""

import dataclasses
import logging
import pathlib
from collections.abc import Callable

from kbert.checkpoints import google_import
from kbert.checkpoints import huggingface_import
from kbert.checkpoints import keras_hub_import
from kbert.files.output_lock import OutputLock

logger = logging.getLogger("kbert.checkpoints")


@dataclasses.dataclass(frozen=True)
class CheckpointFormat:
    """A checkpoint format `convert` can read.

    Attributes:
        name: short name, stored as `metadata.json`'s "source".
        description: what a folder of this format holds, for error messages.
        detect: folder -> whether it is in this format. Looks at file names (and at
            most one small JSON file), never at weights.
        load: folder -> `(model, tokenizer)`; tokenizer may be None. Must raise before
            returning anything when the checkpoint is incomplete or inconsistent.
        reads_casing: whether `load` takes `lowercase=` (formats that do not record
            whether the vocabulary is cased). For the others, an explicit `lowercase`
            is applied to the loaded tokenizer.
    """

    name: str
    description: str
    detect: Callable[[pathlib.Path], bool]
    load: Callable[[pathlib.Path], tuple]
    reads_casing: bool = False


def _is_kbert_preset(folder):
    from kbert.presets.preset_writer import is_kbert_preset

    return is_kbert_preset(folder)


def load_kbert_preset(folder):
    """`(model, tokenizer)` from a kbert preset, as the class it was saved as."""
    from kbert import models
    from kbert.presets.preset_loader import read_preset_config

    class_name = read_preset_config(folder)["class_name"]
    model_class = getattr(models, class_name, None)
    if model_class is None or not hasattr(model_class, "from_preset"):
        raise ValueError(
            f"{folder}: config.json names class_name={class_name!r}, which is not a kbert model."
        )
    model = model_class.from_preset(folder)
    if hasattr(model, "tokenizer"):
        return model, model.tokenizer
    from kbert.tokenizer.bert_tokenizer import BertTokenizer

    folder = pathlib.Path(folder)
    if any((folder / name).is_file() for name in huggingface_import.TOKENIZER_FILES):
        return model, BertTokenizer.from_preset(folder)
    return model, None


CHECKPOINT_FORMATS = (
    CheckpointFormat(
        name="kbert",
        description="a kbert preset: config.json (with format_version) and model.weights.h5",
        detect=_is_kbert_preset,
        load=load_kbert_preset,
    ),
    CheckpointFormat(
        name="huggingface",
        description=(
            "a Hugging Face transformers BERT folder: "
            f"{huggingface_import.CONFIG_FILE} with one of "
            f"{', '.join(huggingface_import.WEIGHT_FILES)}"
        ),
        detect=huggingface_import.is_huggingface_folder,
        load=huggingface_import.load_huggingface,
    ),
    CheckpointFormat(
        name="google",
        description=(
            "an original google-research/bert checkpoint: "
            f"{google_import.CONFIG_FILE}, {google_import.CHECKPOINT_PREFIX}.index and "
            f"{google_import.CHECKPOINT_PREFIX}.data-*, {google_import.VOCABULARY_FILE}"
        ),
        detect=google_import.is_google_folder,
        load=google_import.load_google,
        reads_casing=True,
    ),
    CheckpointFormat(
        name="keras-hub",
        description=(
            "a keras-hub (or keras-nlp) BERT preset: config.json naming BertBackbone, "
            "model.weights.h5, optionally task.json + task.weights.h5 (BertMaskedLM or "
            "BertTextClassifier)"
        ),
        detect=keras_hub_import.is_keras_hub_folder,
        load=keras_hub_import.load_keras_hub,
    ),
)

def detect_format(source):
    """The `CheckpointFormat` of the folder `source`.

    Raises:
        ValueError: when `source` is not a folder or matches no known format; the
            message lists what each format looks for and what the folder holds.
    """
    source = pathlib.Path(source).expanduser()
    if not source.exists():
        raise ValueError(f"Checkpoint folder not found: {str(source)!r}.")
    if not source.is_dir():
        raise ValueError(
            f"A checkpoint must be given as its folder, not a file. Received: {str(source)!r}"
        )
    for checkpoint_format in CHECKPOINT_FORMATS:
        if checkpoint_format.detect(source):
            return checkpoint_format
    found = sorted(path.name for path in source.iterdir())
    shown = found[:20] + ([f"... ({len(found) - 20} more)"] if len(found) > 20 else [])
    looked_for = "\n  ".join(
        f"{checkpoint_format.name}: {checkpoint_format.description}"
        for checkpoint_format in CHECKPOINT_FORMATS
    )
    raise ValueError(
        f"Unknown checkpoint format in {str(source)!r}. Looked for:\n  {looked_for}\n"
        f"The folder holds: {shown or 'nothing'}"
    )


def holds_checkpoint(folder):
    """Whether `folder` is a folder in one of `CHECKPOINT_FORMATS` (never raises)."""
    folder = pathlib.Path(folder)
    if not folder.is_dir():
        return False
    try:
        detect_format(folder)
    except ValueError:
        return False
    return True


def load_checkpoint(source, lowercase=None):
    """The model and tokenizer of a checkpoint folder in any supported format, or a name.

    Args:
        source: a folder in one of `CHECKPOINT_FORMATS`, or any other source
            `kbert.presets.resolve_preset` takes (a built-in or published name, an
            `hf://` or `kaggle://` handle), read through the preset it resolves to.
        lowercase: force the tokenizer to lower-case (True) or not (False). None keeps
            what the checkpoint records (or, for Google checkpoints, its folder name says).

    Returns:
        `(model, tokenizer, checkpoint_format)`; tokenizer may be None.

    Example:

    >>> model, tokenizer, _ = load_checkpoint("downloads/uncased_L-12_H-768_A-12")
    """
    from kbert.presets.model_source import is_local_source
    from kbert.presets.model_source import resolve_preset

    if not is_local_source(source):
        source = resolve_preset(source)
    checkpoint_format = detect_format(source)
    source = pathlib.Path(source).expanduser()
    logger.info("Reading %s as a %s checkpoint.", source, checkpoint_format.name)
    if checkpoint_format.reads_casing:
        model, tokenizer = checkpoint_format.load(source, lowercase=lowercase)
    else:
        model, tokenizer = checkpoint_format.load(source)
        if lowercase is not None and tokenizer is not None and tokenizer.lowercase != lowercase:
            tokenizer = _with_casing(tokenizer, lowercase)
            if hasattr(model, "tokenizer"):
                model.tokenizer = tokenizer
    return model, tokenizer, checkpoint_format


def _with_casing(tokenizer, lowercase):
    from kbert.tokenizer.bert_tokenizer import BertTokenizer

    settings = dict(tokenizer.get_config(), lowercase=lowercase)
    # Accent stripping follows casing unless it was set on its own.
    if settings.get("strip_accents") == tokenizer.lowercase:
        settings["strip_accents"] = None
    return BertTokenizer(tokenizer.vocabulary, **settings)


def convert(source, destination, overwrite=False, lowercase=None):
    """Converts the checkpoint `source` into a kbert preset at `destination`.

    The whole model is built and every weight checked and assigned before anything is
    written; the preset is then written to a temporary folder and renamed into place, so
    a failure leaves `destination` as it was. The destination's `kbert.files.OutputLock`
    is held from the destination check to the end: a concurrent conversion to the same
    destination raises `OutputLockedError` naming this one's process id.

    Args:
        source: a checkpoint folder in one of `CHECKPOINT_FORMATS`, or any other source
            `kbert.presets.resolve_preset` takes (a built-in or published name, an
            `hf://` or `kaggle://` handle).
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
    from kbert.presets.model_source import is_local_source

    source_path = pathlib.Path(source).expanduser()
    destination = pathlib.Path(destination).expanduser()
    is_local = is_local_source(source)
    if is_local:
        # Fails fast, before the destination is examined.
        detect_format(source_path)
    # Held from the destination check to the end of the write: a second conversion to
    # the same destination fails here instead of both passing the check.
    with OutputLock(destination):
        _check_destination(source_path, destination, overwrite, is_named=not is_local)
        model, tokenizer, checkpoint_format = load_checkpoint(
            source_path if is_local else source, lowercase=lowercase
        )
        origin = str(source_path.resolve()) if is_local else str(source)
        metadata = {"source": checkpoint_format.name, "source_path": origin}
        model.save_to_preset(destination, tokenizer=tokenizer, metadata=metadata)
    destination = destination.resolve()
    logger.info("Wrote %s preset to %s.", type(model).__name__, destination)
    return destination


def _check_destination(source, destination, overwrite, is_named=False):
    from kbert.presets.preset_loader import read_preset_config

    if not is_named and destination.resolve() == source.resolve():
        raise ValueError(
            f"The destination must differ from the source. Received: {str(destination)!r}"
        )
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
    # Overwriting replaces a kbert preset only: anything else may be a user's data
    # (another checkpoint also has a config.json).
    try:
        read_preset_config(destination)
    except ValueError:
        raise ValueError(
            f"Refusing to overwrite {str(destination)!r}: it is not a kbert preset."
        ) from None
