"""The one resolver of every model source, and the built-in presets.

`resolve_preset(source)` turns any model source into a kbert preset folder, converting
checkpoints once into the cache. The preset folder itself is a format like the others
(`kbert.checkpoints.kbert_preset`); models are built from it in `kbert.models`. Nothing
here imports Keras.
"""

from kbert.presets.model_source import resolve_preset
from kbert.presets.preset_registry import BUILTIN_PRESETS

__all__ = ["BUILTIN_PRESETS", "resolve_preset"]
