"""What sequence packing buys in pretraining: real (non-padding) tokens per second.

Makes pretraining shards from variable-length text (by default the repository's own
Markdown files, one document per paragraph: many short documents, as web text has),
then trains one `PretrainingObjective` on them read two ways, in alternation so that
the machine's load affects both alike: unpacked (`ShardReader`, one instance per row)
and packed (`PackedShardReader`, up to 3 per row). Each timed step is one
`train_on_batch` of `--batch-size` rows on batches read beforehand; the figure is the
real tokens of the timed batches over their time. The prediction is the ratio of the
fill factors (the share of real tokens in the rows): the work per row is about the
same, packed or not.

Usage:
    python benchmarks/sequence_packing.py [--size mini] [--sequence-length 128]
        [--batch-size 32] [--rounds 30] [--short-seq-prob 0.1] [--text FILE ...]
"""

import argparse
import itertools
import json
import os
import pathlib
import sys
import tempfile

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from timing import interleaved_timings, summarize  # noqa: E402

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]


def default_texts():
    """The repository's Markdown files: documentation prose, paragraphs of every length."""
    folders = [REPOSITORY, REPOSITORY / "benchmarks", REPOSITORY / "kbert" / "pretraining"]
    return sorted(path for folder in folders for path in folder.glob("*.md"))


def make_shards(texts, folder, sequence_length, seed, short_seq_prob=0.1):
    from kbert.pretraining import create_pretraining_data
    from kbert.tokenizer import BertTokenizer

    tokenizer = BertTokenizer.from_preset("demo")
    create_pretraining_data(
        texts,
        tokenizer,
        folder,
        split_sentences=True,
        document_break=1,
        max_seq_length=sequence_length,
        max_predictions_per_seq=20,
        dupe_factor=5,
        short_seq_prob=short_seq_prob,
        seed=seed,
    )
    return tokenizer


def measure(
    texts, size="mini", sequence_length=128, batch_size=32, rounds=30, seed=1, short_seq_prob=0.1
):
    import keras
    import numpy as np

    from kbert.models import BertBackbone, BertPretrainer
    from kbert.pretraining.packed_shard_reader import PackedShardReader
    from kbert.pretraining.pretraining_objective import PretrainingObjective
    from kbert.pretraining.shard_reader import ShardReader

    with tempfile.TemporaryDirectory() as work:
        shards = pathlib.Path(work) / "shards"
        tokenizer = make_shards(texts, shards, sequence_length, seed, short_seq_prob)
        readers = {
            "unpacked": ShardReader(shards),
            "packed": PackedShardReader(shards, max_sequences_per_row=3, seed=seed),
        }
        # Batches read beforehand (cycled if the data is short): the steps time the model.
        batches = {
            name: list(reader.batches(batch_size, shuffle=True, seed=seed, drop_remainder=True))
            for name, reader in readers.items()
        }
    keras.utils.set_random_seed(seed)
    backbone = BertBackbone.from_size(
        size, vocabulary_size=tokenizer.vocabulary_size, max_positions=max(512, sequence_length)
    )
    model = PretrainingObjective(BertPretrainer(backbone))
    model.compile_objective(keras.optimizers.AdamW(1e-4))
    streams = {name: itertools.cycle(batches[name]) for name in batches}
    tokens = {name: [] for name in batches}

    def step(name):
        batch = next(streams[name])
        tokens[name].append(int(batch["padding_mask"].sum()))
        model.train_on_batch(batch)  # returns host floats: the step has finished

    seconds = interleaved_timings(
        {name: (lambda name=name: step(name)) for name in batches}, rounds, warmup=3
    )
    packed_reader = readers["packed"]
    results = {
        "size": size,
        "sequence_length": sequence_length,
        "batch_size": batch_size,
        "rounds": rounds,
        "short_seq_prob": short_seq_prob,
        "backend": keras.config.backend(),
        "instances": packed_reader.num_instances,
        "packed_rows": packed_reader.num_rows,
        "fill_factor": {
            "unpacked": packed_reader.unpacked_fill_factor,
            "packed": packed_reader.fill_factor,
        },
        "predicted_speedup": packed_reader.fill_factor / packed_reader.unpacked_fill_factor,
    }
    for name in batches:
        timed = tokens[name][-rounds:]  # the warm-up steps come first
        median = summarize(seconds[name])["median"]
        results[name] = {
            "median_step_s": median,
            "real_tokens_per_step": float(np.mean(timed)),
            "real_tokens_per_s": float(np.sum(timed) / np.sum(seconds[name])),
        }
    results["measured_speedup"] = (
        results["packed"]["real_tokens_per_s"] / results["unpacked"]["real_tokens_per_s"]
    )
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="mini", help="BERT size (default: mini)")
    parser.add_argument("--sequence-length", type=int, default=128, help="(default: 128)")
    parser.add_argument("--batch-size", type=int, default=32, help="rows per step (default: 32)")
    parser.add_argument("--rounds", type=int, default=30, help="timed steps each (default: 30)")
    parser.add_argument("--text", nargs="+", type=pathlib.Path, help="text files (default: "
                        "the repository's Markdown files)")
    parser.add_argument("--short-seq-prob", type=float, default=0.1,
                        help="share of instances made shorter on purpose (default: BERT's 0.1)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    results = measure(
        args.text or default_texts(), args.size, args.sequence_length, args.batch_size,
        args.rounds, short_seq_prob=args.short_seq_prob,
    )
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    fill = results["fill_factor"]
    print(
        f"{results['instances']} instances -> {results['packed_rows']} packed rows; fill "
        f"factor {fill['unpacked']:.3f} -> {fill['packed']:.3f} (predicted speed-up "
        f"{results['predicted_speedup']:.2f}x)"
    )
    print(f"{'':<10}{'s/step':>10}{'real tok/step':>15}{'real tok/s':>12}")
    for name in ("unpacked", "packed"):
        row = results[name]
        print(
            f"{name:<10}{row['median_step_s']:>10.3f}{row['real_tokens_per_step']:>15.0f}"
            f"{row['real_tokens_per_s']:>12.0f}"
        )
    print(f"measured speed-up: {results['measured_speedup']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
