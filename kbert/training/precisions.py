"""The precision names a training run takes (plain data: no Keras import)."""

# "auto" is mixed_bfloat16 on a GPU or TPU and float32 on a CPU
# (`kbert.training.optimization.resolve_precision`).
PRECISIONS = ("auto", "float32", "mixed_float16", "mixed_bfloat16")
PRECISION_HELP = (
    "auto: mixed_bfloat16 on a GPU or TPU, float32 on a CPU; mixed_float16 scales the loss."
)
