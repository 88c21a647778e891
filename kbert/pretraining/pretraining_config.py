"""The settings of a pretraining run, checked once, stored in its checkpoints."""

import dataclasses

from kbert.argument_checks import check_bool, check_fraction, check_integer
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.training.precisions import PRECISION_HELP
from kbert.training.precisions import PRECISIONS
from kbert.training.settings import document_settings
from kbert.training.settings import setting

OPTIMIZERS = ("adamw", "lamb")

# Settings a resumed run may change: they do not alter what the next step computes.
RESUMABLE_CHANGES = ("checkpoint_every", "eval_batch_size")


@document_settings
@dataclasses.dataclass(frozen=True)
class PretrainingConfig:
    """How `PretrainingLoop` trains.

    Each field's help is in its metadata (`kbert.training.settings`), read by
    `kbert pretrain` and the "Args:" section below.
    """

    batch_size: int = setting(
        DEFAULT_BATCH_SIZE, "instances per batch, all devices together: the global batch."
    )
    steps: int = setting(
        1000,
        "optimiser updates in the whole run; each takes as many batches as the gradient "
        "accumulation.",
    )
    learning_rate: float = setting(
        1e-4,
        "peak learning rate. BERT used 1e-4 with Adam at batch 256; LAMB tolerates larger "
        "ones (You et al., 2019).",
        metavar="LR",
    )
    warmup_steps: int = setting(
        100, "updates of linear warm-up; the rate then decays linearly to 0."
    )
    optimizer: str = setting(
        "adamw", "adamw, or lamb (keras.optimizers.Lamb).", choices=OPTIMIZERS
    )
    weight_decay: float = setting(
        0.01, "decoupled weight decay; LayerNorm parameters and biases have none.", metavar="W"
    )
    clip_norm: float = setting(
        1.0,
        "the global gradient norm is clipped to this (BERT's 1.0); 0 turns clipping off "
        "(None in the config itself).",
        zero_is_none=True,
    )
    gradient_accumulation_steps: int = setting(
        1, "batches averaged per optimiser update.", flag="--gradient-accumulation"
    )
    precision: str = setting("auto", PRECISION_HELP, choices=PRECISIONS)
    checkpoint_every: int = setting(
        1000,
        "batches between training checkpoints (None: only at the end and on cancellation).",
    )
    dynamic_masking: bool = setting(
        False,
        "mask afresh inside every training step (needed for unmasked shards, made with "
        "create-pretraining-data --dynamic-masking; masked shards keep their stored "
        "masks, with a warning).",
    )
    masked_lm_prob: float = setting(
        0.15, "with dynamic masking: the fraction of tokens predicted.", metavar="P"
    )
    max_predictions_per_seq: int = setting(
        20,
        "with dynamic masking: P, the most predictions per row (a packed row is masked as "
        "one sequence: round(masked_lm_prob * n) of its n maskable tokens, at most P).",
        metavar="P",
    )
    pack_sequences: bool = setting(
        False,
        "pack several instances into each row (MLPerf's BERT packing): attention stays "
        "within each instance, positions restart, one next-sentence prediction per "
        "instance; the batch size then counts rows. The fill factor (share of real tokens) "
        "before and after packing is printed when the run starts; the held-out "
        "evaluation reads instances unpacked.",
    )
    max_sequences_per_row: int = setting(
        3, "with sequence packing: the most instances in one row."
    )
    data_parallel: bool = setting(
        False,
        "replicate the model over every local device and split each batch between them "
        "(kbert.training.distribution).",
    )
    eval_batch_size: int = setting(
        64,
        "batch size of the final evaluation (at most the number of evaluation instances, "
        "rounded down to a multiple of the replicas).",
    )
    seed: int = setting(12345, "seeds initialisation, data order, dropout and masking.")

    def __post_init__(self):
        for name, minimum in (
            ("batch_size", 1),
            ("steps", 1),
            ("warmup_steps", 0),
            ("gradient_accumulation_steps", 1),
            ("max_predictions_per_seq", 1),
            ("max_sequences_per_row", 1),
            ("eval_batch_size", 1),
            ("seed", 0),
        ):
            check_integer(name, getattr(self, name), minimum)
        check_bool("pack_sequences", self.pack_sequences)
        if self.checkpoint_every is not None:
            check_integer("checkpoint_every", self.checkpoint_every, 1)
        if self.warmup_steps > self.steps:
            raise ValueError(
                "`warmup_steps` must not exceed `steps`. Received: "
                f"warmup_steps={self.warmup_steps}, steps={self.steps}"
            )
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(
                f"`optimizer` must be one of {OPTIMIZERS}. Received: optimizer={self.optimizer!r}"
            )
        rate = self.learning_rate
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate <= 0:
            raise ValueError(
                f"`learning_rate` must be a positive number. Received: learning_rate={rate!r}"
            )
        if not isinstance(self.weight_decay, (int, float)) or self.weight_decay < 0:
            raise ValueError(
                f"`weight_decay` must be a number >= 0. Received: weight_decay={self.weight_decay!r}"
            )
        if self.clip_norm is not None and (
            not isinstance(self.clip_norm, (int, float)) or self.clip_norm <= 0
        ):
            raise ValueError(
                f"`clip_norm` must be None or a positive number. Received: clip_norm={self.clip_norm!r}"
            )
        check_fraction("masked_lm_prob", self.masked_lm_prob, allow_zero=False)
        if self.precision not in PRECISIONS:
            raise ValueError(
                f"`precision` must be one of {PRECISIONS}. Received: precision={self.precision!r}"
            )

    @property
    def total_batches(self):
        return self.steps * self.gradient_accumulation_steps

    def to_dict(self):
        return dataclasses.asdict(self)
