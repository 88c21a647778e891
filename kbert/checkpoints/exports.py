"""Exports of kbert models to Hugging Face folders and keras-hub presets.

The source is a kbert model (any object with `to_checkpoint_data(tokenizer)`, as
`kbert.models`' classes have), a `CheckpointData`, or anything `read_checkpoint` reads (a
kbert preset folder, another supported checkpoint, a published name). The format's
writer (`huggingface.write_huggingface`, `keras_hub_preset.write_keras_hub`) turns the
plain data into files through the format's one weight table.

The folder is written into a staging folder and renamed into place
(`kbert.files.atomic_folder.staged_folder`), under the destination's
`kbert.files.OutputLock` from the destination check on; the free space is checked before
the weights are written, and a full disk is one `OSError` (errno ENOSPC) with the
previous export in place.
"""

import logging
import pathlib

from kbert.checkpoints.checkpoint_data import CheckpointData
from kbert.checkpoints.convert import check_destination
from kbert.checkpoints.convert import read_checkpoint
from kbert.checkpoints.huggingface import is_huggingface_folder
from kbert.checkpoints.huggingface import write_huggingface
from kbert.checkpoints.keras_hub_preset import is_keras_hub_folder
from kbert.checkpoints.keras_hub_preset import write_keras_hub
from kbert.files.output_lock import OutputLock
from kbert.files.atomic_folder import staged_folder

logger = logging.getLogger("kbert.checkpoints")


def export_source(source, tokenizer=None):
    """The `CheckpointData` of a model, of plain data, or of a checkpoint folder or name.

    Args:
        source: a kbert model, a `CheckpointData`, or what `read_checkpoint` reads.
        tokenizer: the tokenizer to write with a model `source` (a `BertTokenizer`, or
            a `TokenizerData` with plain data); defaults to the model's own. Ignored for
            a folder `source`, whose own tokenizer is used.
    """
    if isinstance(source, CheckpointData):
        if tokenizer is not None:
            source.tokenizer = tokenizer
        return source
    if hasattr(source, "to_checkpoint_data"):
        return source.to_checkpoint_data(tokenizer)
    data, _ = read_checkpoint(source)
    return data


def _export(source, destination, overwrite, tokenizer, is_same_kind, kind, write):
    destination = pathlib.Path(destination).expanduser()
    with OutputLock(destination):
        data = export_source(source, tokenizer)
        check_destination(destination, overwrite, is_same_kind, kind)
        with staged_folder(destination) as staging:
            written = write(data, staging)
    return data, written, destination.resolve()


def export_huggingface(source, destination, overwrite=False, tokenizer=None):
    """Writes a kbert model as a Hugging Face transformers folder.

    The folder holds what `save_pretrained` writes for BERT: `config.json` (with the
    `BertFor*` class in `architectures`, and `id2label`/`label2id` for classifiers),
    `model.safetensors`, `vocab.txt` and `tokenizer_config.json`. transformers'
    `BertFor*.from_pretrained` (and `AutoModel*`) load it and give kbert's outputs.

    Args:
        source: a kbert model, or anything `kbert.checkpoints.convert.read_checkpoint` reads (a
            kbert preset folder, another supported checkpoint, a published name).
        destination: the folder to write. It must not exist or be empty, unless
            `overwrite` is set and it holds a Hugging Face BERT folder.
        overwrite: replace an existing Hugging Face folder at `destination`.
        tokenizer: the tokenizer to write with a model `source`; defaults to its
            `.tokenizer`. Ignored for a folder `source`, whose own tokenizer is used.

    Returns:
        The folder written, as an absolute `pathlib.Path`.

    Example:

    >>> export_huggingface("presets/my_classifier", "exports/my_classifier")
    >>> transformers.BertForSequenceClassification.from_pretrained("exports/my_classifier")
    """
    data, config, destination = _export(
        source,
        destination,
        overwrite,
        tokenizer,
        is_huggingface_folder,
        "a Hugging Face folder",
        write_huggingface,
    )
    logger.info("Wrote %s as %s to %s.", data.class_name, config["architectures"][0], destination)
    return destination


def export_keras_hub(source, destination, overwrite=False, tokenizer=None):
    """Writes a kbert model as a keras-hub preset folder.

    `keras_hub.models.BertBackbone.from_preset` loads the result, and so does
    `keras_hub.models.BertMaskedLM.from_preset` when the model has a masked-LM head
    (`BertMaskedLM`, `BertPretrainer`) and `keras_hub.models.BertTextClassifier.from_preset`
    for a `BertClassifier`. See `kbert.checkpoints.keras_hub_preset` for what keras-hub's
    BERT cannot express.

    Args:
        source: a kbert model, or anything `kbert.checkpoints.convert.read_checkpoint` reads (a
            kbert preset folder, another supported checkpoint, a published name).
        destination: the folder to write. It must not exist or be empty, unless
            `overwrite` is set and it holds a keras-hub preset.
        overwrite: replace an existing keras-hub preset at `destination`.
        tokenizer: the tokenizer to write with a model `source`; defaults to its
            `.tokenizer`.

    Returns:
        The folder written, as an absolute `pathlib.Path`.

    Example:

    >>> export_keras_hub("presets/bert_base_uncased", "exports/bert_base_uncased")
    >>> keras_hub.models.BertBackbone.from_preset("exports/bert_base_uncased")
    """
    data, hub_class, destination = _export(
        source,
        destination,
        overwrite,
        tokenizer,
        is_keras_hub_folder,
        "a keras-hub preset",
        write_keras_hub,
    )
    logger.info("Wrote %s as keras-hub %s to %s.", data.class_name, hub_class, destination)
    return destination
