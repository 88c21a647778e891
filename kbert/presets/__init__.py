"""Presets: a model as a plain folder, and the one resolver of every model source.

A preset folder holds `config.json` (model class, backbone config, task arguments),
`model.weights.h5` (backbone and head weights by variable path), `vocab.txt` and
`tokenizer_config.json` (tokenizer), and `metadata.json` (versions and provenance).
"""

from kbert.presets.model_source import resolve_preset
from kbert.presets.preset_registry import BUILTIN_PRESETS

__all__ = ["BUILTIN_PRESETS", "resolve_preset"]
