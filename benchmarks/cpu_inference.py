"""Classification on a CPU: kbert against ONNX Runtime and transformers eager, same weights.

What a laptop user of `kbert classify` and the app's Classify tab waits for. One
randomly initialised Hugging Face `BertForSequenceClassification` (seeded, 2 labels,
no download) is saved with `save_pretrained` and loaded three ways:

- kbert: `BertClassifier.from_preset(folder)` (converted once), `model.classify(texts)`
  with its defaults (length-sorted batches of `inference_batch_size()`, 8 texts on a
  CPU, each padded to its own bucket, a jitted forward pass per shape);
- ONNX Runtime: the transformers model exported with `torch.onnx.export` (dynamic
  batch and length, all graph optimisations), fed by the fast tokenizer, texts padded
  to the longest of each batch of `--batch-size` in the caller's order (what a user of
  ORT writes), softmax in NumPy;
- transformers eager: the same batching under `torch.inference_mode()`;
- kbert's other engines, same `classify` call: `engine="onnxruntime"` (kbert's own ONNX
  export of the converted model, cached), the same with `quantize="int8"` (ONNX
  Runtime's dynamic quantization), and `engine="keras", quantize="int8"` (Keras'
  `quantize("int8")`).

Before anything is timed the three engines' label probabilities on the workload are
compared (the largest difference from transformers is reported; at most 1e-3 for the
float32 engines; for the int8 ones it is the accuracy change, reported, not bounded).
Workloads: one sentence, and 64 / 1,000 sentences of 12-40 words in mixed order. The
engines run in alternation (interleaved rounds after warm-up rounds, which include
kbert's compilations); the figures are medians, and what counts are the ratios
`kbert / onnxruntime` and `kbert / transformers` (below 1: kbert is faster).

Usage:
    python benchmarks/cpu_inference.py                       # BERT-base, 1 and 64
    python benchmarks/cpu_inference.py --size tiny --workloads 1 64 1000
    python benchmarks/cpu_inference.py --rounds 3 --output cpu_inference.json

kbert runs on JAX unless KERAS_BACKEND says otherwise; transformers on PyTorch.
"""

import argparse
import importlib.util
import os
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from cpu_fill_mask import write_huggingface_checkpoint  # noqa: E402
from random_preset import made_up_vocabulary  # noqa: E402
from timing import interleaved_timings, report, summarize  # noqa: E402

from kbert.architecture.bert_config import BERT_SIZES  # noqa: E402

ENGINES = ("kbert", "onnxruntime", "transformers", "kbert-keras", "kbert-onnxruntime",
           "kbert-onnxruntime-int8", "kbert-keras-int8")
# kbert's engine and quantization for each kbert row; "kbert" is what a user's call gets
# (engine="auto": ONNX Runtime once the graph is cached, which `engines_for` makes first).
KBERT_ENGINES = {
    "kbert": ("auto", None),
    "kbert-keras": ("keras", None),
    "kbert-onnxruntime": ("onnxruntime", None),
    "kbert-onnxruntime-int8": ("onnxruntime", "int8"),
    "kbert-keras-int8": ("keras", "int8"),
}
INT8_ENGINES = ("kbert-onnxruntime-int8", "kbert-keras-int8")
# Every run has these: the ratios the targets are set on compare them.
REFERENCE_ENGINES = ("kbert", "onnxruntime", "transformers")
# Logits of the float32 engines on the same inputs agree at least this well.
LOGIT_TOLERANCE = 1e-3


def mixed_sentences(count, vocabulary, seed=0, shortest=12, longest=40):
    """`count` sentences of `shortest` to `longest` words of `vocabulary`, in random order.

    One sentence is a short request (the app's one-text case): 12 words.
    """
    rng = np.random.default_rng(seed)
    words = [token for token in vocabulary if token.isalpha()]
    if count == 1:
        lengths = [shortest]
    else:
        lengths = rng.integers(shortest, longest + 1, size=count)
    return [" ".join(rng.choice(words, size=int(length))) + " ." for length in lengths]


def export_onnx(model, path):
    """The transformers model as ONNX (TorchScript exporter), batch and length dynamic."""
    import torch

    names = ["input_ids", "attention_mask", "token_type_ids"]
    example = tuple(torch.ones((2, 16), dtype=torch.int64) for _ in names)
    torch.onnx.export(
        model,
        example,
        path,
        input_names=names,
        output_names=["logits"],
        dynamic_axes={name: {0: "batch", 1: "length"} for name in names}
        | {"logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    return path


def onnx_session(path):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def batched_reference(tokenizer, run, texts, batch_size):
    """Logits (N, 2) of `run(encoded batch)` over `texts` in order, padded per batch."""
    logits = []
    for start in range(0, len(texts), batch_size):
        encoded = tokenizer(texts[start : start + batch_size], padding=True, return_tensors="np")
        logits.append(run(encoded))
    return np.concatenate(logits)


def engines_for(checkpoint, preset, onnx_path, batch_size, names=ENGINES):
    """`{name: texts -> logits (N, 2)}` for the engines in `names`."""
    import torch
    import transformers

    from kbert.checkpoints import convert
    from kbert.models import BertClassifier

    convert(checkpoint, preset)
    classifier = BertClassifier.from_preset(preset)
    if importlib.util.find_spec("onnxruntime") is not None:
        # What a user does once: one call on ONNX Runtime exports and caches the graph,
        # which "auto" then takes (it never exports by itself).
        start = time.perf_counter()
        classifier.classify("the graph is made once", engine="onnxruntime")
        print(f"ONNX export and session: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    tokenizer = transformers.AutoTokenizer.from_pretrained(checkpoint)
    model = transformers.BertForSequenceClassification.from_pretrained(checkpoint).eval()
    session = onnx_session(export_onnx(model, onnx_path))

    def kbert_engine(engine, quantize):
        def kbert_logits(texts):
            # kbert's own batching (`inference_batch_size`: 8 texts per pass on a CPU),
            # as a user's `classify(texts)` runs; the references batch by `batch_size`.
            results = classifier.classify(texts, engine=engine, quantize=quantize)
            return np.array([list(result.probabilities.values()) for result in results])

        return kbert_logits

    def onnx_logits(texts):
        def run(encoded):
            feeds = {name: encoded[name].astype(np.int64) for name in
                     ("input_ids", "attention_mask", "token_type_ids")}
            return session.run(None, feeds)[0]

        return softmax(batched_reference(tokenizer, run, texts, batch_size))

    def torch_logits(texts):
        def run(encoded):
            with torch.inference_mode():
                tensors = {name: torch.from_numpy(value) for name, value in encoded.items()}
                return model(**tensors).logits.numpy()

        return softmax(batched_reference(tokenizer, run, texts, batch_size))

    engines = {"onnxruntime": onnx_logits, "transformers": torch_logits}
    for name, (engine, quantize) in KBERT_ENGINES.items():
        engines[name] = kbert_engine(engine, quantize)
    return {name: engines[name] for name in names}


def softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)


def chosen_engines(engines):
    """`engines` and the reference engines, in the order of `ENGINES`."""
    unknown = set(engines) - set(ENGINES)
    if unknown:
        raise ValueError(f"unknown engines {sorted(unknown)}; known: {', '.join(ENGINES)}")
    return tuple(name for name in ENGINES if name in set(engines) | set(REFERENCE_ENGINES))


def measure(size="base", vocabulary_size=30522, workloads=(1, 64), rounds=5, warmup=2,
            batch_size=32, seed=0, engines=ENGINES, calls_per_round=10):
    """Builds the engines (`engines`, and always `REFERENCE_ENGINES`) and times each
    workload in interleaved rounds.

    Returns:
        A dict with, per workload (its sentence count as a string): `max_tokens`,
        `probability_difference` (largest, per engine, from transformers'),
        `milliseconds` (per engine: median, p90, min, runs) and the ratios
        `kbert_over_onnxruntime`, `kbert_over_transformers`.

    Raises:
        RuntimeError: when an engine's probabilities differ from transformers' by more
            than `LOGIT_TOLERANCE` (the engines would not compute the same thing).
    """
    import keras

    names = chosen_engines(engines)
    with tempfile.TemporaryDirectory(prefix="kbert-cpu-inference-") as scratch:
        checkpoint = write_huggingface_checkpoint(
            os.path.join(scratch, "huggingface"), size, vocabulary_size, seed,
            head="BertForSequenceClassification", num_labels=2,
        )
        vocabulary = made_up_vocabulary(vocabulary_size)
        engines = engines_for(
            checkpoint, os.path.join(scratch, "kbert"), os.path.join(scratch, "model.onnx"),
            batch_size, names,
        )
        result = {
            "engines": list(names),
            "size": size,
            "vocabulary_size": vocabulary_size,
            "batch_size": batch_size,
            "calls_per_round": calls_per_round,
            "kbert_backend": keras.config.backend(),
            "cpu_count": os.cpu_count(),
            "workloads": {},
        }
        for count in workloads:
            result["workloads"][str(count)] = measure_workload(
                engines, names, mixed_sentences(count, vocabulary, seed),
                calls_per_round if count == 1 else 1, rounds, warmup,
            )
    return result


def measure_workload(engines, names, texts, repeat, rounds, warmup):
    """Checks that `engines` agree on `texts`, then times them in interleaved rounds,
    each engine running `repeat` calls in a row per round (figures per call)."""
    outputs = {name: engine(texts) for name, engine in engines.items()}
    differences = {
        name: float(np.abs(outputs[name] - outputs["transformers"]).max()) for name in names
    }
    exact = {name: value for name, value in differences.items() if name not in INT8_ENGINES}
    if max(exact.values()) > LOGIT_TOLERANCE:
        raise RuntimeError(
            f"The engines disagree on {len(texts)} sentences: largest probability "
            f"differences from transformers {differences}"
        )

    # Short requests run several times in a row per engine and round: ONNX Runtime's
    # threads spin a while after each run, which slows whichever engine runs next on two
    # cores.
    def repeated(engine):
        for _ in range(repeat):
            engine(texts)

    seconds = interleaved_timings(
        {name: (lambda engine=engine: repeated(engine)) for name, engine in engines.items()},
        rounds=rounds,
        warmup=warmup,
    )
    milliseconds = {
        name: {key: value if key == "runs" else 1000 * value / repeat
               for key, value in summarize(values).items()}
        for name, values in seconds.items()
    }
    kbert = milliseconds["kbert"]["median"]
    return {
        "max_words": max(len(text.split()) for text in texts),
        "probability_difference": differences,
        "milliseconds": milliseconds,
        "kbert_over_onnxruntime": kbert / milliseconds["onnxruntime"]["median"],
        "kbert_over_transformers": kbert / milliseconds["transformers"]["median"],
        "over_kbert": {name: milliseconds[name]["median"] / kbert for name in names},
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


def format_table(result):
    """One row per workload and engine: median ms, the ratio to kbert (Keras), the
    largest probability difference from transformers, the load average."""
    lines = [
        f"classification, BERT-{result['size']} (vocabulary {result['vocabulary_size']}), "
        f"kbert on {result['kbert_backend']}, batch {result['batch_size']}, "
        f"{result['cpu_count']} CPUs",
        f"{'sentences':>9} {'engine':<24} {'median ms':>10} {'/ kbert':>8} {'max diff':>9} "
        f"{'load':>5}",
    ]
    for count, figures in result["workloads"].items():
        load = figures["load_average"]
        for name in result["engines"]:
            lines.append(
                f"{count:>9} {name:<24} {figures['milliseconds'][name]['median']:>10.1f} "
                f"{figures['over_kbert'][name]:>8.2f} "
                f"{figures['probability_difference'][name]:>9.1e} "
                f"{'n/a' if load is None else f'{load[0]:.1f}':>5}"
            )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(BERT_SIZES), default="base", help="(default: base)")
    parser.add_argument("--vocabulary-size", type=int, default=30522, help="(default: 30522)")
    parser.add_argument("--workloads", type=int, nargs="+", default=[1, 64],
                        help="sentence counts (default: 1 64)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (default: 5)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds (default: 2)")
    parser.add_argument("--batch-size", type=int, default=32,
                        help="the reference engines' texts per batch (default: 32)")
    parser.add_argument("--calls-per-round", type=int, default=10,
                        help="calls in a row per engine and round for one sentence (default: 10)")
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES),
                        help="the engines to time; kbert, onnxruntime and transformers always "
                        "run (default: all)")
    parser.add_argument("--output", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    result = measure(args.size, args.vocabulary_size, args.workloads, args.rounds, args.warmup,
                     args.batch_size, engines=args.engines,
                     calls_per_round=args.calls_per_round)
    report(result, format_table(result), args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
