"""Turns a checkpoint in another format into a kbert preset, detecting the format.

Each format is one `CheckpointFormat` row in `CHECKPOINT_FORMATS`: a cheap detector that
looks at file names, and a loader returning `(model, tokenizer)`. A new format (Google's
TensorFlow checkpoints, keras-hub presets) is one more row; `convert` and the CLI pick it
up unchanged. Detectors run in table order and the first match wins, so a more specific
format goes before a more general one.
"""

import dataclasses
import logging
import pathlib
from collections.abc import Callable

from kbert.checkpoints import huggingface_import

logger = logging.getLogger("kbert.checkpoints")


@dataclasses.dataclass(frozen=True)
class CheckpointFormat:
    """A checkpoint format `convert` can read.

    Attributes:
        name: short name, stored as `metadata.json`'s "source".
        description: what a folder of this format holds, for error messages.
        detect: folder -> whether it is in this format. Looks at file names only.
        load: folder -> `(model, tokenizer)`; tokenizer may be None. Must raise before
            returning anything when the checkpoint is incomplete or inconsistent.
    """

    name: str
    description: str
    detect: Callable[[pathlib.Path], bool]
    load: Callable[[pathlib.Path], tuple]


CHECKPOINT_FORMATS = (
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
)


def detect_format(source):
    """The `CheckpointFormat` of the folder `source`.

    Raises:
        ValueError: when `source` is not a folder or matches no known format; the
            message lists what each format looks for and what the folder holds.
    """
    source = pathlib.Path(source).expanduser()
    if not source.exists():
        raise ValueError(f"Checkpoint folder not found: {str(source)!r}")
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


def convert(source, destination, overwrite=False):
    """Converts the checkpoint folder `source` into a kbert preset at `destination`.

    The whole model is built and every weight checked and assigned before anything is
    written; the preset is then written to a temporary folder and renamed into place, so
    a failure leaves `destination` as it was.

    Args:
        source: a checkpoint folder in one of `CHECKPOINT_FORMATS`.
        destination: the preset folder to write. It must not exist or be empty, unless
            `overwrite` is set and it is a kbert preset.
        overwrite: replace an existing preset at `destination`.

    Returns:
        The preset folder, as an absolute `pathlib.Path`.

    Example:

    >>> convert("downloads/bert-base-uncased", "presets/bert_base_uncased")
    PosixPath('/home/me/presets/bert_base_uncased')
    >>> BertPretrainer.from_preset("presets/bert_base_uncased")
    """
    source = pathlib.Path(source).expanduser()
    destination = pathlib.Path(destination).expanduser()
    checkpoint_format = detect_format(source)
    _check_destination(source, destination, overwrite)
    logger.info("Reading %s as a %s checkpoint.", source, checkpoint_format.name)
    model, tokenizer = checkpoint_format.load(source)
    metadata = {"source": checkpoint_format.name, "source_path": str(source.resolve())}
    model.save_to_preset(destination, tokenizer=tokenizer, metadata=metadata)
    destination = destination.resolve()
    logger.info("Wrote %s preset to %s.", type(model).__name__, destination)
    return destination


def _check_destination(source, destination, overwrite):
    from kbert.presets.preset_loader import read_preset_config

    if destination.resolve() == source.resolve():
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
