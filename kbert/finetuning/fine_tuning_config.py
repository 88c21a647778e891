"""The hyperparameters of a fine-tuning run."""

import dataclasses

from kbert.argument_checks import check_positive_int
from kbert.preprocessing.long_text_windows import LONG_TEXT_CHOICES
from kbert.preprocessing.long_text_windows import WINDOW_OVERLAP
from kbert.preprocessing.long_text_windows import check_long_texts
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.training.adam_epsilon import EPSILON_STYLES
from kbert.training.precisions import PRECISION_HELP
from kbert.training.precisions import PRECISIONS
from kbert.training.settings import document_settings
from kbert.training.settings import setting

# Settings that may change when a run is resumed: they do not affect the weights.
# (The device count changes only the order of floating-point sums.)
RESUMABLE_CHANGES = ("checkpoint_every", "eval_batch_size", "data_parallel")


@document_settings
@dataclasses.dataclass(frozen=True)
class FineTuningConfig:
    """Hyperparameters of `FineTuner`; the defaults are BERT's GLUE recipe.

    Each field's help is in its metadata (`kbert.training.settings`), read by
    `kbert finetune`, the app's form and the "Args:" section below.
    """

    epochs: int = setting(3, "passes over the training data.")
    batch_size: int = setting(
        DEFAULT_BATCH_SIZE,
        "examples per batch; per optimiser update without gradient accumulation.",
    )
    learning_rate: float = setting(5e-5, "peak learning rate of AdamW.", metavar="LR")
    warmup_ratio: float = setting(
        0.1, "share of the updates with a linearly rising learning rate.", metavar="R"
    )
    weight_decay: float = setting(
        0.01, "AdamW's decoupled weight decay, not on LayerNorm or biases.", metavar="W"
    )
    gradient_accumulation_steps: int = setting(
        1,
        "batches whose gradients are averaged per optimiser update; the effective batch "
        "is the batch size times this.",
        flag="--gradient-accumulation",
    )
    clip_norm: float = setting(
        1.0,
        "the global gradient norm is clipped to this; 0 turns clipping off (None in the "
        "config itself).",
        zero_is_none=True,
    )
    adam_epsilon_style: str = setting(
        "keras",
        "where AdamW adds epsilon: 'keras' (to sqrt(v), before the bias correction) or "
        "'torch' (after it, as transformers' Trainer does; a Trainer recipe then "
        "reproduces step for step).",
        choices=EPSILON_STYLES,
    )
    precision: str = setting("auto", PRECISION_HELP, choices=PRECISIONS)
    max_length: int = setting(
        None,
        "longest input in tokens. Longer texts are truncated with a warning (or read in "
        "windows, see long_texts); QA contexts are split into windows instead.",
        none="the model's limit",
    )
    long_texts: str = setting(
        "truncate",
        "(pair-)classification texts longer than max_length: 'truncate' cuts them (with a "
        f"warning); 'windows' reads a single text in windows overlapping by {WINDOW_OVERLAP} "
        "tokens (at most half a window), "
        "trains on each window with the text's label and scores the mean of a text's "
        "window logits. Text pairs are truncated either way.",
        choices=LONG_TEXT_CHOICES,
    )
    patience: int = setting(
        None,
        "stop after this many epochs without a better evaluation score (needs evaluation "
        "data).",
        none="never stop early",
    )
    seed: int = setting(0, "seeds the initialisation of new heads, dropout and the data order.")
    checkpoint_every: int = setting(
        500,
        "write a training checkpoint every this many batches, besides every epoch end "
        "(None: epoch ends only).",
    )
    eval_batch_size: int = setting(
        64, "examples (QA: windows) per forward pass in evaluation."
    )
    data_parallel: bool = setting(
        False,
        "replicate the model on every local device and split each batch between them "
        "(JAX: keras.distribution; TensorFlow: MirroredStrategy over its GPUs).",
    )

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
        check_long_texts(self.long_texts)
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
