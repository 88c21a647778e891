"""Import and export of other checkpoint formats.

- `convert(src, dst)` writes any supported checkpoint (Hugging Face folder, original
  Google TensorFlow checkpoint, keras-hub preset, or a published name such as
  "bert-base-uncased") as a kbert preset; `load_checkpoint(src)` returns the model.
- `export_huggingface(src, dst)` / `export_keras_hub(src, dst)` write a kbert model in
  those formats.
- `resolve_named_checkpoint(name)` downloads and converts a published checkpoint once.
- Every loader refuses files that could run code or read other files
  (`kbert.checkpoints.safe_loading`, `kbert.presets.weights_file`).
"""

from kbert.checkpoints.convert import CHECKPOINT_FORMATS
from kbert.checkpoints.convert import CheckpointFormat
from kbert.checkpoints.convert import convert
from kbert.checkpoints.convert import detect_format
from kbert.checkpoints.convert import load_checkpoint
from kbert.checkpoints.google_import import load_google
from kbert.checkpoints.huggingface_export import export_huggingface
from kbert.checkpoints.huggingface_import import load_huggingface
from kbert.checkpoints.keras_hub_export import export_keras_hub
from kbert.checkpoints.keras_hub_import import load_keras_hub
from kbert.checkpoints.named_checkpoints import NAMED_CHECKPOINTS
from kbert.checkpoints.named_checkpoints import resolve_named_checkpoint

__all__ = [
    "CHECKPOINT_FORMATS",
    "CheckpointFormat",
    "NAMED_CHECKPOINTS",
    "convert",
    "detect_format",
    "export_huggingface",
    "export_keras_hub",
    "load_checkpoint",
    "load_google",
    "load_huggingface",
    "load_keras_hub",
    "resolve_named_checkpoint",
]
