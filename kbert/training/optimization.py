"""BERT's fine-tuning optimiser: AdamW, linear warm-up then linear decay, and precision.

Everything here is a stock Keras object configured the way BERT was trained
(Devlin et al., 2018, appendix A.3), so a user can pass the result straight to
`model.compile`:

- AdamW (`BertAdamW`) whose weight decay skips LayerNorm scales and offsets and
  every bias, with epsilon where Keras adds it or where PyTorch does;
- a learning rate that rises linearly from 0 over the warm-up, then falls linearly
  to 0 at the last optimiser update;
- gradient accumulation (`gradient_accumulation_steps`) and clipping of the global
  gradient norm (`global_clipnorm`), both built into Keras optimisers;
- mixed precision through a Keras dtype policy; under "mixed_float16",
  `model.compile` wraps the optimiser in a `LossScaleOptimizer` by itself. The
  default, "auto", is "mixed_bfloat16" on a GPU or TPU (tensor-core matmuls, and the
  precision cuDNN's fused attention needs) and "float32" on a CPU, where bfloat16
  matmuls are no faster under XLA and results stay those of the reference models.
"""

import contextlib
import logging

import keras
from keras import ops

from kbert.argument_checks import check_positive_int
from kbert.platform_support import describe_device
from kbert.platform_support import runs_on_accelerator
from kbert.training.adam_epsilon import EPSILON_STYLES
from kbert.training.bert_adamw import NO_DECAY_VARIABLE_NAMES
from kbert.training.bert_adamw import BertAdamW
from kbert.training.precisions import PRECISIONS

logger = logging.getLogger("kbert.training")


@keras.saving.register_keras_serializable(package="kbert")
class LinearWarmupDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warm-up from 0 to `learning_rate`, then linear decay to 0.

    Steps count optimiser updates. Keras calls a schedule with the optimiser's raw
    iteration counter, which under gradient accumulation advances once per batch, so
    the schedule divides it by `gradient_accumulation_steps` first.

    Args:
        learning_rate: the peak learning rate, reached at the end of the warm-up.
        warmup_steps: number of updates of the warm-up (0 for none).
        total_steps: number of updates of the whole run; the rate is 0 from here on.
        gradient_accumulation_steps: batches per optimiser update.

    Example:

    >>> schedule = LinearWarmupDecay(1e-4, warmup_steps=10, total_steps=100)
    >>> float(schedule(5)), float(schedule(10)), float(schedule(55))
    (5e-05, 0.0001, 5e-05)
    """

    def __init__(self, learning_rate, warmup_steps, total_steps, gradient_accumulation_steps=1):
        if not isinstance(learning_rate, (int, float)) or learning_rate <= 0:
            raise ValueError(
                "`learning_rate` must be a positive number. "
                f"Received: learning_rate={learning_rate!r}"
            )
        check_positive_int("total_steps", total_steps)
        check_positive_int("gradient_accumulation_steps", gradient_accumulation_steps)
        if isinstance(warmup_steps, bool) or not isinstance(warmup_steps, int) or warmup_steps < 0:
            raise ValueError(
                f"`warmup_steps` must be an integer >= 0. Received: warmup_steps={warmup_steps!r}"
            )
        if warmup_steps > total_steps:
            raise ValueError(
                "`warmup_steps` must not exceed `total_steps`. Received: "
                f"warmup_steps={warmup_steps}, total_steps={total_steps}"
            )
        self.learning_rate = float(learning_rate)
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        self.gradient_accumulation_steps = gradient_accumulation_steps

    def __call__(self, step):
        step = ops.floor_divide(ops.cast(step, "float32"), self.gradient_accumulation_steps)
        warmup = ops.maximum(float(self.warmup_steps), 1.0)
        rising = step / warmup
        falling = (self.total_steps - step) / max(self.total_steps - self.warmup_steps, 1)
        fraction = ops.where(step < self.warmup_steps, rising, ops.maximum(falling, 0.0))
        return self.learning_rate * fraction

    def get_config(self):
        return {
            "learning_rate": self.learning_rate,
            "warmup_steps": self.warmup_steps,
            "total_steps": self.total_steps,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
        }


OPTIMIZERS = ("adamw", "lamb")


def create_optimizer(
    total_steps,
    learning_rate=5e-5,
    warmup_ratio=0.1,
    weight_decay=0.01,
    gradient_accumulation_steps=1,
    clip_norm=1.0,
    warmup_steps=None,
    optimizer="adamw",
    epsilon_style="keras",
):
    """AdamW (or LAMB) as BERT trains, with the schedule of `LinearWarmupDecay`.

    The one optimiser construction of fine-tuning (`FineTuner`) and pretraining
    (`PretrainingLoop`).

    Args:
        total_steps: optimiser updates in the whole run (batches divided by
            `gradient_accumulation_steps`, rounded down).
        learning_rate: peak learning rate.
        warmup_ratio: fraction of `total_steps` spent warming up, in [0, 1].
        weight_decay: decoupled weight decay; LayerNorm parameters and biases have none.
        gradient_accumulation_steps: average the gradients of this many batches
            before each update (1: update after every batch).
        clip_norm: clip the global gradient norm to this value (None: no clipping).
        warmup_steps: updates of warm-up; given, it replaces `warmup_ratio`.
        optimizer: "adamw", or "lamb" (layer-wise adaptive, for large pretraining batches).
        epsilon_style: where AdamW adds epsilon: "keras" (before the bias correction) or
            "torch" (after it, as `torch.optim.AdamW` and transformers' Trainer); see
            `BertAdamW`. Only for "adamw".

    Returns:
        A `BertAdamW` (or `keras.optimizers.Lamb`), ready for
        `model.compile(optimizer=...)`.
    """
    if not isinstance(warmup_ratio, (int, float)) or not 0.0 <= warmup_ratio <= 1.0:
        raise ValueError(
            f"`warmup_ratio` must be a number in [0, 1]. Received: warmup_ratio={warmup_ratio!r}"
        )
    if not isinstance(weight_decay, (int, float)) or weight_decay < 0:
        raise ValueError(
            f"`weight_decay` must be a number >= 0. Received: weight_decay={weight_decay!r}"
        )
    if clip_norm is not None and (not isinstance(clip_norm, (int, float)) or clip_norm <= 0):
        raise ValueError(
            f"`clip_norm` must be None or a positive number. Received: clip_norm={clip_norm!r}"
        )
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"`optimizer` must be one of {OPTIMIZERS}. Received: optimizer={optimizer!r}")
    check_positive_int("gradient_accumulation_steps", gradient_accumulation_steps)
    check_positive_int("total_steps", total_steps)
    schedule = LinearWarmupDecay(
        learning_rate,
        warmup_steps=int(warmup_ratio * total_steps) if warmup_steps is None else warmup_steps,
        total_steps=total_steps,
        gradient_accumulation_steps=gradient_accumulation_steps,
    )
    if epsilon_style not in EPSILON_STYLES:
        raise ValueError(
            f"`epsilon_style` must be one of {EPSILON_STYLES}. "
            f"Received: epsilon_style={epsilon_style!r}"
        )
    if optimizer == "lamb" and epsilon_style != "keras":
        raise ValueError("`epsilon_style` applies to AdamW; LAMB takes only 'keras'.")
    options = dict(
        learning_rate=schedule,
        weight_decay=weight_decay,
        # BERT's Adam epsilon (1e-6), not Keras' default (1e-7).
        epsilon=1e-6,
        global_clipnorm=clip_norm,
        # Keras accepts None (no accumulation) or an integer >= 2.
        gradient_accumulation_steps=gradient_accumulation_steps
        if gradient_accumulation_steps > 1
        else None,
    )
    if optimizer == "lamb":
        optimizer = keras.optimizers.Lamb(**options)
        optimizer.exclude_from_weight_decay(var_names=list(NO_DECAY_VARIABLE_NAMES))
        return optimizer
    return BertAdamW(epsilon_style=epsilon_style, **options)


def resolve_precision(precision):
    """The dtype policy `precision` stands for on this machine.

    "auto" is "mixed_bfloat16" where the backend computes on a GPU or TPU and
    "float32" on a CPU; every other name of `PRECISIONS` is itself.

    Example:

    >>> resolve_precision("auto")  # on a CPU
    'float32'
    """
    if precision not in PRECISIONS:
        raise ValueError(
            f"`precision` must be one of {PRECISIONS}. Received: precision={precision!r}"
        )
    if precision != "auto":
        return precision
    return "mixed_bfloat16" if runs_on_accelerator() else "float32"


def describe_precision(precision):
    """`precision` and what it resolves to, in words, e.g. "auto: float32 (JAX on CPU)"."""
    resolved = resolve_precision(precision)
    if resolved == precision:
        return f"{resolved} ({describe_device()})"
    return f"{precision}: {resolved} ({describe_device()})"


@contextlib.contextmanager
def precision_policy(precision):
    """Builds models inside this block with the dtype policy `precision`.

    Keras layers read the global policy when they are created, so models built in
    the block keep it; the previous global policy is restored on exit. The choice is
    logged (INFO, logger "kbert.finetuning").

    Args:
        precision: one of `PRECISIONS` ("auto": see `resolve_precision`). Under
            "mixed_float16", `model.compile` adds dynamic loss scaling (a
            `keras.optimizers.LossScaleOptimizer`).

    Yields:
        The dtype policy name in force.
    """
    resolved = resolve_precision(precision)
    logger.info("Precision %s", describe_precision(precision))
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(resolved)
    try:
        yield resolved
    finally:
        keras.mixed_precision.set_global_policy(previous)
