"""One fine-tuning step on a CPU: kbert on Keras' PyTorch backend against plain PyTorch.

The same classifier (random weights of a BERT size, MiniLM's by default: 6 layers, hidden
384), the same batch and the same recipe (AdamW with Trainer's epsilon placement, weight
decay 0.01, global-norm clipping 1.0, dropout 0.1): kbert's `BertClassifier` compiled as
`kbert finetune` compiles it and stepped with `train_on_batch`, against transformers'
`BertForSequenceClassification` with `torch.optim.AdamW` and `clip_grad_norm_`, the loop
Trainer runs. The two alternate, round after round, in one process; the figure is each
side's median step time and their ratio. `--profile` adds PyTorch's profile of kbert's
step (the ops that cost most, by self time).

Usage: KERAS_BACKEND=torch python benchmarks/cpu_training_step.py [--batch 32 --length 32]
    [--rounds 5 --steps 5] [--profile]
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("KERAS_BACKEND", "torch")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

MINILM = dict(
    vocabulary_size=30522,
    hidden_size=384,
    num_layers=6,
    num_heads=12,
    intermediate_size=1536,
    max_positions=512,
)
NUM_CLASSES = 6


def batch_arrays(batch, length, vocabulary_size, seed=0):
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(1000, vocabulary_size, size=(batch, length)).astype("int32")
    padding_mask = np.ones((batch, length), dtype="int32")
    labels = rng.integers(0, NUM_CLASSES, size=(batch,)).astype("int32")
    return token_ids, padding_mask, labels


def kbert_side(arrays, total_steps):
    from kbert.architecture.bert_config import BertConfig
    from kbert.models.bert_backbone import BertBackbone
    from kbert.models.bert_classifier import BertClassifier
    from kbert.training.optimization import create_optimizer

    config = BertConfig(**MINILM, hidden_dropout=0.1, attention_dropout=0.1)
    model = BertClassifier(BertBackbone.from_config_object(config), num_classes=NUM_CLASSES)
    optimizer = create_optimizer(total_steps, learning_rate=1e-4, epsilon_style="torch")
    model.compile(optimizer=optimizer)
    token_ids, padding_mask, labels = arrays
    x = {
        "token_ids": token_ids,
        "segment_ids": np.zeros_like(token_ids),
        "padding_mask": padding_mask,
    }
    return lambda: model.train_on_batch(x, labels)


def torch_side(arrays, total_steps):
    import transformers

    config = transformers.BertConfig(
        vocab_size=MINILM["vocabulary_size"],
        hidden_size=MINILM["hidden_size"],
        num_hidden_layers=MINILM["num_layers"],
        num_attention_heads=MINILM["num_heads"],
        intermediate_size=MINILM["intermediate_size"],
        num_labels=NUM_CLASSES,
        attn_implementation="sdpa",
    )
    model = transformers.BertForSequenceClassification(config).train()
    decay = [p for n, p in model.named_parameters() if "bias" not in n and "LayerNorm" not in n]
    rest = [p for n, p in model.named_parameters() if "bias" in n or "LayerNorm" in n]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
        lr=1e-4,
        eps=1e-6,
    )
    scheduler = transformers.get_linear_schedule_with_warmup(
        optimizer, int(0.1 * total_steps), total_steps
    )
    token_ids, padding_mask, labels = (torch.from_numpy(a).long() for a in arrays)

    def step():
        loss = model(input_ids=token_ids, attention_mask=padding_mask, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        return float(loss)

    return step


def timed(step, steps):
    started = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - started) / steps


def op_times(step, steps=3):
    """Self CPU milliseconds and calls per step of each PyTorch op in `step`."""
    from torch.profiler import ProfilerActivity, profile as torch_profile

    with torch_profile(activities=[ProfilerActivity.CPU]) as profiler:
        for _ in range(steps):
            step()
    return {
        event.key: (event.self_cpu_time_total / 1000 / steps, event.count / steps)
        for event in profiler.key_averages()
    }


def print_profiles(sides, rows):
    """The ops that cost most in either side, per step: self time and calls."""
    profiles = {name: op_times(step) for name, step in sides.items()}
    names = list(profiles)
    keys = sorted(
        set().union(*profiles.values()),
        key=lambda key: -max(profile.get(key, (0, 0))[0] for profile in profiles.values()),
    )
    print(f"{'op':<44}" + "".join(f"{name + ' ms':>13}{'calls':>7}" for name in names))
    for key in keys[:rows]:
        cells = (profiles[name].get(key, (0.0, 0)) for name in names)
        print(f"{key[:43]:<44}" + "".join(f"{ms:>13.1f}{calls:>7.0f}" for ms, calls in cells))
    totals = {name: sum(ms for ms, _ in profile.values()) for name, profile in profiles.items()}
    print(f"{'total':<44}" + "".join(f"{totals[name]:>13.1f}{'':>7}" for name in names))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if keras.backend.backend() != "torch":
        parser.error("run with KERAS_BACKEND=torch")
    keras.utils.set_random_seed(0)
    arrays = batch_arrays(args.batch, args.length, MINILM["vocabulary_size"])
    total = 2 * args.rounds * args.steps + 10
    sides = {"kbert": kbert_side(arrays, total), "pytorch": torch_side(arrays, total)}
    for step in sides.values():
        timed(step, 2)  # warm-up: first calls build and allocate
    times = {name: [] for name in sides}
    for _ in range(args.rounds):
        for name, step in sides.items():
            times[name].append(timed(step, args.steps))
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    print(
        f"batch ({args.batch}, {args.length}), threads {torch.get_num_threads()}: "
        + ", ".join(f"{name} {ms:.0f} ms" for name, ms in medians.items())
        + f"; kbert / pytorch {medians['kbert'] / medians['pytorch']:.2f}"
    )
    if args.profile:
        print_profiles(sides, 40)


if __name__ == "__main__":
    main()
