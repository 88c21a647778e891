"""Models as plain data, and saved as kbert presets.

A model is its weights by path, its config and task arguments, and its tokenizer's
vocabulary and settings (`CheckpointData`); the kbert-preset format writer
(`kbert.checkpoints.kbert_preset.write_preset`) and the exports write that.
"""

import keras

from kbert.checkpoints.checkpoint_data import CheckpointData
from kbert.checkpoints.kbert_preset import write_preset
from kbert.models.registered_names import kbert_class_name
from kbert.models.registered_names import registered_name


def checkpoint_data(model, tokenizer=None):
    """`model` (a `BertBackbone` or a task model) and `tokenizer` as a `CheckpointData`."""
    backbone = getattr(model, "backbone", model)
    backbone_ids = {id(variable) for variable in backbone.weights}
    weights = {
        f"backbone/{variable.path}": keras.ops.convert_to_numpy(variable)
        for variable in backbone.weights
    }
    weights.update(
        {
            f"head/{variable.path}": keras.ops.convert_to_numpy(variable)
            for variable in model.weights
            if id(variable) not in backbone_ids
        }
    )
    return CheckpointData(
        class_name=kbert_class_name(type(model)),
        config=backbone.bert_config,
        weights=weights,
        task=model.task_config() if hasattr(model, "task_config") else {},
        tokenizer=None if tokenizer is None else tokenizer.tokenizer_data(),
        untrained_heads=tuple(getattr(model, "freshly_initialized_heads", []) or []),
        registered_name=registered_name(type(model)),
    )


def save_preset(model, folder, tokenizer=None, metadata=None):
    """Writes `model` (and `tokenizer`, if given) as a preset folder at `folder`.

    See `kbert.checkpoints.kbert_preset.write_preset`: written beside `folder` and swapped
    in, under its output lock; an existing folder that is not a preset is refused.

    Returns:
        The folder, as an absolute `pathlib.Path`.
    """
    saved_with = {"keras_version": keras.__version__, "saved_with_backend": keras.backend.backend()}
    return write_preset(
        checkpoint_data(model, tokenizer), folder, metadata={**saved_with, **(metadata or {})}
    )
