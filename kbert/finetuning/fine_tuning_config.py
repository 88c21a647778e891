"""The hyperparameters of a fine-tuning run."""

import dataclasses

from kbert.argument_checks import check_positive_int
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.training.adam_epsilon import EPSILON_STYLES
from kbert.training.precisions import PRECISIONS

# Settings that may change when a run is resumed: they do not affect the weights.
# (The device count changes only the order of floating-point sums.)
RESUMABLE_CHANGES = ("checkpoint_every", "eval_batch_size", "data_parallel")


@dataclasses.dataclass(frozen=True)
class FineTuningConfig:
    """Hyperparameters of `FineTuner`; the defaults are BERT's GLUE recipe.

    Args:
        epochs: passes over the training data.
        batch_size: examples per batch (per optimiser update without accumulation).
        learning_rate: peak learning rate of AdamW.
        warmup_ratio: fraction of the updates with a linearly rising rate.
        weight_decay: AdamW's decoupled weight decay (not on LayerNorm or biases).
        gradient_accumulation_steps: batches whose gradients are averaged per update,
            for an effective batch `batch_size * gradient_accumulation_steps`.
        clip_norm: the global gradient norm is clipped to this (None: no clipping).
        adam_epsilon_style: where AdamW adds epsilon: "keras" (to sqrt(v), before the
            bias correction) or "torch" (after it, as transformers' Trainer does; a
            Trainer recipe then reproduces step for step).
        precision: "auto" (mixed_bfloat16 on a GPU or TPU, float32 on a CPU),
            "float32", "mixed_float16" (with loss scaling) or "mixed_bfloat16".
        max_length: longest input in tokens; None for the model's limit. Longer
            texts are truncated with a warning; QA contexts are windowed instead.
        patience: stop after this many epochs without a better evaluation score
            (None: never stop early). Needs evaluation data.
        seed: seeds the initialisation of new heads, dropout and the data order.
        checkpoint_every: write a training checkpoint every this many batches (and
            at every epoch end); None for epoch ends only.
        eval_batch_size: examples (QA: windows) per forward pass in evaluation.
        data_parallel: replicate the model on every local device and split each batch
            between them (`kbert.training.distribution.data_parallel`).
    """

    epochs: int = 3
    batch_size: int = DEFAULT_BATCH_SIZE
    learning_rate: float = 5e-5
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    gradient_accumulation_steps: int = 1
    clip_norm: float = 1.0
    adam_epsilon_style: str = "keras"
    precision: str = "auto"
    max_length: int = None
    patience: int = None
    seed: int = 0
    checkpoint_every: int = 500
    eval_batch_size: int = 64
    data_parallel: bool = False

    def __post_init__(self):
        for name in ("epochs", "batch_size", "gradient_accumulation_steps", "eval_batch_size"):
            check_positive_int(name, getattr(self, name))
        for name in ("max_length", "patience", "checkpoint_every"):
            if getattr(self, name) is not None:
                check_positive_int(name, getattr(self, name))
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"`seed` must be an integer >= 0. Received: seed={self.seed!r}")
        if self.adam_epsilon_style not in EPSILON_STYLES:
            raise ValueError(
                f"`adam_epsilon_style` must be one of {EPSILON_STYLES}. "
                f"Received: adam_epsilon_style={self.adam_epsilon_style!r}"
            )
        if self.precision not in PRECISIONS:
            raise ValueError(
                f"`precision` must be one of {PRECISIONS}. Received: precision={self.precision!r}"
            )
        for name in ("learning_rate", "warmup_ratio", "weight_decay"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"`{name}` must be a number >= 0. Received: {name}={value!r}")
        if self.learning_rate <= 0:
            raise ValueError(
                f"`learning_rate` must be positive. Received: learning_rate={self.learning_rate}"
            )
        if self.warmup_ratio > 1:
            raise ValueError(
                f"`warmup_ratio` must be in [0, 1]. Received: warmup_ratio={self.warmup_ratio}"
            )
        if self.clip_norm is not None and (
            isinstance(self.clip_norm, bool)
            or not isinstance(self.clip_norm, (int, float))
            or self.clip_norm <= 0
        ):
            raise ValueError(
                f"`clip_norm` must be None or positive. Received: clip_norm={self.clip_norm!r}"
            )

    def to_dict(self):
        return dataclasses.asdict(self)

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)
