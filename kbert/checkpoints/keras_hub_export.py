"""Exports kbert models as keras-hub presets.

The kbert weights are copied into a keras-hub model of the same size (the layout
mapping is `keras_hub_import.weight_links`, used the other way round), which keras-hub
then saves with its own `save_to_preset`, into a staging folder that is renamed into
place, under the destination's `kbert.files.OutputLock`, after a free-space check.
`keras_hub.models.BertBackbone.from_preset` loads the result, and so does
`keras_hub.models.BertMaskedLM.from_preset` when the model has a masked-LM head
(`BertMaskedLM`, `BertPretrainer`) and `keras_hub.models.BertTextClassifier.from_preset`
for a `BertClassifier`.

What keras-hub's BERT cannot express:
- its encoder always uses the tanh approximation of GELU and LayerNorm epsilon 1e-12.
  A kbert model with `activation="gelu_approximate"` exports exactly; one with the exact
  "gelu" (every Hugging Face and Google BERT) exports with a warning, its outputs then
  differing by the approximation (typically 1e-4 to 1e-3). Other activations are refused.
- its masked-LM head uses exact GELU and epsilon 1e-5 whatever the encoder does (kbert's
  head settings are its own, so a head imported from keras-hub exports exactly).
- it has no next-sentence, token-classification or question-answering head: those heads
  are left out (with a warning) and the backbone exported.
"""

import logging
import pathlib

from kbert.checkpoints import keras_hub_import
from kbert.checkpoints.huggingface_export import check_export_destination
from kbert.checkpoints.huggingface_export import resolve_export_source
from kbert.files.atomic_write import check_free_space
from kbert.files.output_lock import OutputLock

logger = logging.getLogger("kbert.checkpoints")

KERAS_HUB_LAYER_NORM_EPSILON = 1e-12
_SPECIAL_TOKENS = {
    "unk_token": "[UNK]",
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "pad_token": "[PAD]",
    "mask_token": "[MASK]",
}


def _check_exportable(config):
    if config.activation not in ("gelu", "gelu_approximate"):
        raise ValueError(
            "keras-hub's BertBackbone always uses GELU; a model with "
            f"activation={config.activation!r} cannot be exported to it."
        )
    if config.activation == "gelu":
        logger.warning(
            "The model uses the exact GELU; keras-hub's BertBackbone computes the tanh "
            "approximation, so the exported model's outputs differ slightly (typically "
            "1e-4 to 1e-3)."
        )
    if config.layer_norm_epsilon != KERAS_HUB_LAYER_NORM_EPSILON:
        logger.warning(
            "The model's LayerNorm epsilon is %g; keras-hub's BertBackbone uses %g.",
            config.layer_norm_epsilon,
            KERAS_HUB_LAYER_NORM_EPSILON,
        )
    if config.attention_dropout != config.hidden_dropout:
        logger.info(
            "keras-hub has one dropout rate; the export uses hidden_dropout=%g.",
            config.hidden_dropout,
        )


def keras_hub_tokenizer(tokenizer):
    """keras-hub's `BertTokenizer` with the vocabulary and casing of a kbert tokenizer."""
    import keras_hub

    unusual = {
        argument: getattr(tokenizer, argument)
        for argument, token in _SPECIAL_TOKENS.items()
        if getattr(tokenizer, argument) != token
    }
    if unusual:
        raise ValueError(
            f"keras-hub's BertTokenizer uses the special tokens {sorted(_SPECIAL_TOKENS.values())}; "
            f"this tokenizer has {unusual}."
        )
    strip_accents = (
        tokenizer.lowercase if tokenizer.strip_accents is None else tokenizer.strip_accents
    )
    return keras_hub.models.BertTokenizer(
        vocabulary=tokenizer.vocabulary,
        lowercase=tokenizer.lowercase,
        strip_accents=strip_accents,
    )


def keras_hub_model(model, tokenizer=None):
    """The keras-hub model (`BertBackbone`, `BertMaskedLM` or `BertTextClassifier`) with `model`'s weights."""
    import keras_hub

    from kbert import models

    backbone = getattr(model, "backbone", model)
    config = backbone.bert_config
    _check_exportable(config)
    hub_backbone = keras_hub.models.BertBackbone(
        vocabulary_size=config.vocabulary_size,
        num_layers=config.num_layers,
        num_heads=config.num_heads,
        hidden_dim=config.hidden_size,
        intermediate_dim=config.intermediate_size,
        dropout=config.hidden_dropout,
        max_sequence_length=config.max_positions,
        num_segments=config.type_vocabulary_size,
    )
    hub_tokenizer = keras_hub_tokenizer(tokenizer) if tokenizer is not None else None
    sequence_length = min(tokenizer.max_length, config.max_positions) if tokenizer else None

    if isinstance(model, (models.BertMaskedLM, models.BertPretrainer)):
        if isinstance(model, models.BertPretrainer):
            logger.warning("keras-hub has no next-sentence head; it is left out of the export.")
        head_settings = (model.head_activation, model.head_layer_norm_epsilon)
        if head_settings != ("gelu", keras_hub_import.KERAS_HUB_HEAD_LAYER_NORM_EPSILON):
            logger.warning(
                "keras-hub's masked-LM head uses exact GELU and LayerNorm epsilon %g; this "
                "model's head uses %s and %g, so the exported masked-LM logits differ slightly.",
                keras_hub_import.KERAS_HUB_HEAD_LAYER_NORM_EPSILON,
                *head_settings,
            )
        preprocessor = (
            keras_hub.models.BertMaskedLMPreprocessor(
                hub_tokenizer, sequence_length=sequence_length
            )
            if hub_tokenizer is not None
            else None
        )
        hub_model = keras_hub.models.BertMaskedLM(hub_backbone, preprocessor=preprocessor)
        head_model = model
    elif isinstance(model, models.BertClassifier):
        preprocessor = (
            keras_hub.models.BertTextClassifierPreprocessor(
                hub_tokenizer, sequence_length=sequence_length
            )
            if hub_tokenizer is not None
            else None
        )
        hub_model = keras_hub.models.BertTextClassifier(
            hub_backbone,
            num_classes=model.num_classes,
            preprocessor=preprocessor,
            dropout=model.dropout,
        )
        head_model = model
    else:
        if model is not backbone:
            logger.warning(
                "keras-hub has no BERT task for %s; only the backbone is exported.",
                type(model).__name__,
            )
        hub_model = hub_backbone
        head_model = backbone

    links = keras_hub_import.weight_links(head_model, hub_model)
    for link in links:
        link.check()
    for link in links:
        link.to_keras_hub()
    return hub_model, hub_tokenizer


def export_keras_hub(source, destination, overwrite=False, tokenizer=None):
    """Writes a kbert model as a keras-hub preset folder.

    Args:
        source: a kbert model, or anything `kbert.checkpoints.load_checkpoint` reads (a
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
    from kbert.presets.preset_writer import staged_folder

    destination = pathlib.Path(destination).expanduser()
    with OutputLock(destination):
        model, tokenizer = resolve_export_source(source, tokenizer)
        check_export_destination(
            destination, overwrite, keras_hub_import.is_keras_hub_folder, "a keras-hub preset"
        )
        hub_model, hub_tokenizer = keras_hub_model(model, tokenizer)
        with staged_folder(destination) as staging:
            # Keras writes the weights with h5py: make sure they fit before it starts.
            check_free_space(staging, 4 * hub_model.count_params(), staging / "model.weights.h5")
            hub_model.save_to_preset(str(staging))
            if hub_tokenizer is not None and hub_model is getattr(
                hub_model, "backbone", hub_model
            ):
                # A task saves its preprocessor's tokenizer; a bare backbone does not.
                hub_tokenizer.save_to_preset(str(staging))
    destination = destination.resolve()
    logger.info(
        "Wrote %s as keras-hub %s to %s.",
        type(model).__name__,
        type(hub_model).__name__,
        destination,
    )
    return destination
