"""Every checkpoint format kbert reads, detected from a folder's files.

Each format is one `CheckpointFormat` row in `CHECKPOINT_FORMATS`: a cheap detector that
looks at file names (and at most a small JSON file), and a reader returning the model as
`CheckpointData`. `convert`, the resolver and the CLI pick up a new row unchanged.
Detectors run in table order and the first match wins, so a more specific format goes
before a more general one.
"""

import logging
import pathlib

from kbert.checkpoints import google
from kbert.checkpoints import huggingface
from kbert.checkpoints import kbert_preset
from kbert.checkpoints import keras_hub_preset
from kbert.checkpoints.checkpoint_format import CheckpointFormat
from kbert.checkpoints.huggingface_tensors import WEIGHT_FILES

logger = logging.getLogger("kbert.checkpoints")

CHECKPOINT_FORMATS = (
    CheckpointFormat(
        name="kbert",
        description="a kbert preset: config.json (with format_version) and model.weights.h5",
        detect=kbert_preset.is_kbert_preset,
        read=kbert_preset.read_preset,
    ),
    CheckpointFormat(
        name="huggingface",
        description=(
            "a Hugging Face transformers BERT folder: "
            f"{huggingface.CONFIG_FILE} with one of {', '.join(WEIGHT_FILES)}"
        ),
        detect=huggingface.is_huggingface_folder,
        read=huggingface.read_huggingface,
    ),
    CheckpointFormat(
        name="google",
        description=(
            "an original google-research/bert checkpoint: "
            f"{google.CONFIG_FILE}, {google.CHECKPOINT_PREFIX}.index and "
            f"{google.CHECKPOINT_PREFIX}.data-*, {google.VOCABULARY_FILE}"
        ),
        detect=google.is_google_folder,
        read=google.read_google,
        reads_casing=True,
    ),
    CheckpointFormat(
        name="keras-hub",
        description=(
            "a keras-hub (or keras-nlp) BERT preset: config.json naming BertBackbone, "
            "model.weights.h5, optionally task.json + task.weights.h5 (BertMaskedLM or "
            "BertTextClassifier)"
        ),
        detect=keras_hub_preset.is_keras_hub_folder,
        read=keras_hub_preset.read_keras_hub,
    ),
)


def detect_format(source):
    """The `CheckpointFormat` of the folder `source`.

    Raises:
        ValueError: when `source` is not a folder or matches no known format; the
            message (one line) says what the folder holds and where each format's
            files are listed.
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
    raise ValueError(
        f"Unknown checkpoint format in {str(source)!r}: it holds {folder_contents(source)}, "
        "not the files of a kbert preset or of a Hugging Face, Google or keras-hub "
        "checkpoint (`kbert convert --help` lists each format's files)."
    )


def folder_contents(folder, shown=10):
    """The names in `folder`, the first `shown` of them, for an error message ("nothing" if empty)."""
    found = sorted(path.name for path in pathlib.Path(folder).iterdir())
    if not found:
        return "nothing"
    more = f", ... ({len(found) - shown} more)" if len(found) > shown else ""
    return ", ".join(found[:shown]) + more


def format_descriptions():
    """One line per format: its name and the files it holds (for `kbert convert --help`)."""
    return [f"{fmt.name}: {fmt.description}" for fmt in CHECKPOINT_FORMATS]


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


def read_folder(folder, lowercase=None):
    """`(CheckpointData, CheckpointFormat)` of a checkpoint folder in any supported format.

    Args:
        folder: a folder in one of `CHECKPOINT_FORMATS`.
        lowercase: force the tokenizer to lower-case (True) or not (False). None keeps
            what the checkpoint records (or, for Google checkpoints, its folder name says).
    """
    folder = pathlib.Path(folder).expanduser()
    checkpoint_format = detect_format(folder)
    logger.info("Reading %s as a %s checkpoint.", folder, checkpoint_format.name)
    if checkpoint_format.reads_casing:
        return checkpoint_format.read(folder, lowercase=lowercase), checkpoint_format
    data = checkpoint_format.read(folder)
    tokenizer = data.tokenizer
    if lowercase is not None and tokenizer is not None:
        if tokenizer.setting("lowercase") != lowercase:
            data.tokenizer = tokenizer.with_casing(lowercase)
    return data, checkpoint_format
