"""Every checkpoint format as plain data: read, converted and written without Keras.

One module per format, each declaring its names for kbert's variables once in a
`WeightMap` that import and export both read: `kbert_preset` (kbert's own folders),
`huggingface`, `google` (original TensorFlow 1 checkpoints) and `keras_hub_preset`.
Every format reads into, and writes from, `CheckpointData` (config, weights by kbert
path, tokenizer as `TokenizerData`); `kbert.models` builds models from it.

- `convert(src, dst)` writes any supported checkpoint (Hugging Face folder, original
  Google TensorFlow checkpoint, keras-hub preset, or a published name such as
  "bert-base-uncased") as a kbert preset (`convert.read_checkpoint`, internal, reads its
  data; users load models with `from_preset` and resolve sources with
  `kbert.presets.resolve_preset`).
- `export_huggingface(src, dst)` / `export_keras_hub(src, dst)` write a kbert model (or
  a preset folder) in those formats.
- `resolve_named_checkpoint(name)` downloads and converts a published checkpoint once.
- Every reader refuses files that could run code or read other files, and checks every
  shape against the file's header before reading data (`safe_loading`, `weights_file`).
"""

from kbert.checkpoints.checkpoint_data import CheckpointData
from kbert.checkpoints.checkpoint_format import CheckpointFormat
from kbert.checkpoints.convert import convert
from kbert.checkpoints.convert import resolve_named_checkpoint
from kbert.checkpoints.exports import export_huggingface
from kbert.checkpoints.exports import export_keras_hub
from kbert.checkpoints.formats import CHECKPOINT_FORMATS
from kbert.checkpoints.formats import detect_format
from kbert.checkpoints.named_checkpoints import NAMED_CHECKPOINTS
from kbert.checkpoints.tokenizer_data import TokenizerData

__all__ = [
    "CHECKPOINT_FORMATS",
    "CheckpointData",
    "CheckpointFormat",
    "NAMED_CHECKPOINTS",
    "TokenizerData",
    "convert",
    "detect_format",
    "export_huggingface",
    "export_keras_hub",
    "resolve_named_checkpoint",
]
