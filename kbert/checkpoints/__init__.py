"""Import of other checkpoint formats into kbert models and presets.

`load_huggingface(folder)` builds a model from a Hugging Face `transformers` BERT folder;
`convert(src, dst)` writes any supported checkpoint as a kbert preset.
"""

from kbert.checkpoints.convert import CHECKPOINT_FORMATS, CheckpointFormat, convert, detect_format
from kbert.checkpoints.huggingface_import import load_huggingface

__all__ = [
    "CHECKPOINT_FORMATS",
    "CheckpointFormat",
    "convert",
    "detect_format",
    "load_huggingface",
]
