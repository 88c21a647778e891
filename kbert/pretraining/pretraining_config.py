"""The settings of a pretraining run, checked once, stored in its checkpoints."""

import dataclasses

from kbert.argument_checks import check_bool, check_fraction, check_integer
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.training.precisions import PRECISIONS

OPTIMIZERS = ("adamw", "lamb")

# Settings a resumed run may change: they do not alter what the next step computes.
RESUMABLE_CHANGES = ("checkpoint_every", "eval_batch_size")


@dataclasses.dataclass(frozen=True)
class PretrainingConfig:
    """How `PretrainingLoop` trains.

    Args:
        batch_size: instances per batch, across all devices (the global batch).
        steps: optimiser updates in the whole run. Each takes
            `gradient_accumulation_steps` batches.
        learning_rate: the peak learning rate. BERT used 1e-4 with Adam at batch
            256; LAMB tolerates larger ones (You et al., 2019).
        warmup_steps: updates of linear warm-up; the rate then decays linearly to 0.
        optimizer: "adamw" or "lamb" (`keras.optimizers.Lamb`).
        weight_decay: decoupled weight decay; LayerNorm parameters and biases have none.
        clip_norm: clip of the global gradient norm (BERT's 1.0), None for none.
        gradient_accumulation_steps: batches averaged per update.
        precision: "auto" (mixed_bfloat16 on a GPU or TPU, float32 on a CPU),
            "float32", "mixed_float16" or "mixed_bfloat16".
        checkpoint_every: write a training checkpoint every this many batches
            (None: only at the end and on cancellation).
        dynamic_masking: mask inside the compiled step (data made with
            `--dynamic-masking` needs it; masked data keeps its stored masks, with
            a warning).
        masked_lm_prob: with dynamic masking, the fraction of tokens predicted.
        max_predictions_per_seq: with dynamic masking, `P`, the predictions per row
            (a packed row is masked as one sequence: `round(masked_lm_prob * n)` of
            its `n` maskable tokens, at most `P`).
        pack_sequences: pack several instances into each row (`PackedShardReader`):
            `batch_size` then counts rows, and the real tokens per batch grow by the
            ratio of the fill factors. The held-out evaluation reads instances unpacked.
        max_sequences_per_row: with `pack_sequences`, the most instances in one row.
        data_parallel: replicate the model over every local device (see
            `kbert.training.distribution`).
        eval_batch_size: batch size of the final evaluation (at most the number
            of evaluation instances, rounded down to a multiple of the replicas).
        seed: seeds initialisation, data order, dropout and masking.
    """

    batch_size: int = DEFAULT_BATCH_SIZE
    steps: int = 1000
    learning_rate: float = 1e-4
    warmup_steps: int = 100
    optimizer: str = "adamw"
    weight_decay: float = 0.01
    clip_norm: float = 1.0
    gradient_accumulation_steps: int = 1
    precision: str = "auto"
    checkpoint_every: int = 1000
    dynamic_masking: bool = False
    masked_lm_prob: float = 0.15
    max_predictions_per_seq: int = 20
    pack_sequences: bool = False
    max_sequences_per_row: int = 3
    data_parallel: bool = False
    eval_batch_size: int = 64
    seed: int = 12345

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
