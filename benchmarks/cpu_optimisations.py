"""What four of kbert's design choices buy on a CPU, each against its alternative.

Each comparison times the two variants in alternation (`timing.interleaved_timings`,
so the machine's load affects both alike), after warm-up calls that compile them, on
random weights (no download). kbert on JAX:

- `gelu`: a masked-LM training step (`train_on_batch`) with exact GELU (kbert's
  default, for parity with BERT) against `BertConfig(activation="gelu_approximate")`.
- `masked_positions`: the same step with the masked-LM head at P = 20 positions per row
  (what kbert trains on) against all L positions (a head over the whole sequence).
- `fused_qkv`: the query, key and value projections of one layer's (B * L, H) input as
  one (H, 3H) matrix product (what `BertSelfAttention` does) against three (H, H) ones.
- `masking`: BERT's masking rule for one batch inside the compiled program
  (`DynamicMasking`, what `--dynamic-masking` runs in the step) against the same rule on
  the host (`DynamicMasking.mask_numpy`, what an input pipeline would run per batch).

The figure that counts is each comparison's `ratio`: the alternative's median time over
kbert's choice (above 1: kbert's choice is faster).

    python benchmarks/cpu_optimisations.py [--size mini] [--batch-size 16] [--length 128]
        [--rounds 10] [--only gelu masked_positions] [--output figures.json]
"""

import argparse
import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from timing import interleaved_timings, summarize  # noqa: E402

COMPARISONS = ("gelu", "masked_positions", "fused_qkv", "masking")
VOCABULARY_SIZE = 30522
PREDICTIONS = 20


def _batch(batch_size, length, slots, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    inputs = {
        "token_ids": rng.integers(5, VOCABULARY_SIZE, (batch_size, length)).astype("int32"),
        "segment_ids": np.zeros((batch_size, length), "int32"),
        "padding_mask": np.ones((batch_size, length), "int32"),
        "mask_positions": np.sort(
            np.stack([rng.permutation(length)[:slots] for _ in range(batch_size)]), axis=1
        ).astype("int32"),
    }
    labels = rng.integers(5, VOCABULARY_SIZE, (batch_size, slots)).astype("int32")
    weights = np.ones((batch_size, slots), "float32")
    return inputs, labels, weights


def _masked_lm_step(size, batch_size, length, slots, activation="gelu"):
    """A `train_on_batch` call of a random `BertMaskedLM` (one step, compiled once)."""
    import keras

    from kbert.models import BertBackbone
    from kbert.models import BertMaskedLM

    keras.utils.set_random_seed(0)
    backbone = BertBackbone.from_size(
        size, vocabulary_size=VOCABULARY_SIZE, max_positions=max(length, 128),
        activation=activation,
    )
    model = BertMaskedLM(backbone)
    model.compile(optimizer=keras.optimizers.AdamW(1e-4))
    inputs, labels, weights = _batch(batch_size, length, slots)
    return lambda: model.train_on_batch(inputs, labels, sample_weight=weights)


def _projections(size, batch_size, length):
    """`(fused, separate)`: one layer's Q, K, V projections, compiled with `jax.jit`."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from kbert.architecture.bert_config import BERT_SIZES

    hidden = BERT_SIZES[size][1]
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((batch_size * length, hidden), np.float32))
    fused_kernel = jnp.asarray(rng.standard_normal((hidden, 3 * hidden), np.float32) * 0.02)
    kernels = [fused_kernel[:, i * hidden : (i + 1) * hidden] for i in range(3)]
    kernels = [jnp.asarray(np.asarray(kernel)) for kernel in kernels]
    # The fused product is returned whole: the layer reads its three parts in place
    # (a reshape), and splitting it here would add a copy the layer does not make.
    fused = jax.jit(lambda x, w: x @ w)
    separate = jax.jit(lambda x, ws: [x @ w for w in ws])
    return (
        lambda: jax.block_until_ready(fused(x, fused_kernel)),
        lambda: jax.block_until_ready(separate(x, kernels)),
    )


def _masking(batch_size, length):
    """`(in_step, on_host)`: BERT's masking of one batch, compiled and in NumPy."""
    import jax
    import keras
    import numpy as np

    from kbert.pretraining.dynamic_masking import DynamicMasking

    masking = DynamicMasking(
        vocabulary_size=VOCABULARY_SIZE, mask_token_id=4, special_token_ids=[0, 1, 2, 3, 4],
        max_predictions_per_seq=min(PREDICTIONS, length), seed=0,
    )
    token_ids, _, _ = _batch(batch_size, length, 1)
    token_ids = token_ids["token_ids"]
    token_ids[:, 0], token_ids[:, -1] = 2, 3  # [CLS] ... [SEP]

    def stateless_mask(variables, token_ids):
        return masking.stateless_call([], variables, token_ids)

    compiled = jax.jit(stateless_mask)
    state = {"variables": [variable.value for variable in masking.non_trainable_variables]}

    def in_step():
        outputs, state["variables"] = compiled(state["variables"], token_ids)
        jax.block_until_ready(outputs)

    rng = np.random.default_rng(0)
    del keras
    return in_step, lambda: masking.mask_numpy(token_ids, rng)


def _compare(kbert_way, alternative, rounds, warmup):
    seconds = interleaved_timings(
        {"kbert": kbert_way, "alternative": alternative}, rounds=rounds, warmup=warmup
    )
    milliseconds = {
        name: {key: value if key == "runs" else 1000 * value for key, value in summarize(values).items()}
        for name, values in seconds.items()
    }
    milliseconds["ratio"] = milliseconds["alternative"]["median"] / milliseconds["kbert"]["median"]
    return milliseconds


def measure(size="mini", batch_size=16, length=128, rounds=10, warmup=2, only=COMPARISONS):
    """Runs the comparisons in `only`; returns `{comparison: {kbert, alternative, ratio}}`."""
    import keras

    if keras.config.backend() != "jax":
        raise RuntimeError(f"This benchmark runs on JAX. Received: KERAS_BACKEND={keras.config.backend()!r}")
    unknown = sorted(set(only) - set(COMPARISONS))
    if unknown:
        raise ValueError(f"Unknown comparisons {unknown}; choose from {list(COMPARISONS)}.")
    result = {
        "size": size, "batch_size": batch_size, "length": length, "rounds": rounds,
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }
    predictions = min(PREDICTIONS, length)
    if "gelu" in only:
        result["gelu"] = _compare(
            _masked_lm_step(size, batch_size, length, predictions),
            _masked_lm_step(size, batch_size, length, predictions, "gelu_approximate"),
            rounds, warmup,
        )
    if "masked_positions" in only:
        result["masked_positions"] = _compare(
            _masked_lm_step(size, batch_size, length, predictions),
            _masked_lm_step(size, batch_size, length, length),
            rounds, warmup,
        )
    if "fused_qkv" in only:
        result["fused_qkv"] = _compare(*_projections(size, batch_size, length), rounds, warmup)
    if "masking" in only:
        result["masking"] = _compare(*_masking(batch_size, length), rounds, warmup)
    return result


def format_table(result):
    lines = [
        f"BERT-{result['size']}, batch {result['batch_size']} x {result['length']} tokens, "
        f"{result['rounds']} interleaved rounds, load average "
        + " ".join(f"{value:.2f}" for value in result["load_average"] or []),
        f"{'comparison':<18}{'kbert ms':>10}{'other ms':>10}{'other/kbert':>13}",
    ]
    for name in COMPARISONS:
        if name in result:
            figures = result[name]
            lines.append(
                f"{name:<18}{figures['kbert']['median']:>10.2f}"
                f"{figures['alternative']['median']:>10.2f}{figures['ratio']:>13.2f}"
            )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="mini", help="a BERT size (default: mini)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--only", nargs="+", choices=COMPARISONS, default=list(COMPARISONS))
    parser.add_argument("--output", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    result = measure(args.size, args.batch_size, args.length, args.rounds, args.warmup, args.only)
    print(format_table(result))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as file:
            json.dump(result, file, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
