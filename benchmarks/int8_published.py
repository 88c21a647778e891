"""int8 on a real fine-tuned classifier: what `--quantize int8` costs in accuracy and saves in time.

The bundled spam filter (`demo-spam`: `demo` fine-tuned on the SMS Spam Collection by
scripts/build_task_models.py) scored on its 500 held-out messages (the published-data
split of benchmarks/published_tasks.py, fetched by scripts/fetch_published_data.sh) by
kbert's engines, one `model.classify(texts)` call each, the same texts:

- keras: Keras' float32 forward pass (`engine="keras"`);
- onnxruntime: kbert's ONNX graph in ONNX Runtime, float32 (`engine="onnxruntime"`);
- onnxruntime-int8: the same graph dynamically quantized to int8
  (`engine="onnxruntime", quantize="int8"`);
- keras-int8: Keras' `quantize("int8")` (`engine="keras", quantize="int8"`).

Each engine's accuracy and macro-F1 on the 500 messages, its agreement with the float32
Keras labels and the largest change of a spam probability; then the time of one
sentence and of all 500 messages, the engines in alternation (interleaved rounds after
warm-up rounds, which include compilations and the graph's export), medians.

Usage:
    python benchmarks/int8_published.py DATA [--rounds 5] [--output int8.json]
"""

import argparse
import os
import pathlib
import sys
import tempfile

import numpy as np

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import published_tasks  # noqa: E402
from timing import interleaved_timings, report, summarize  # noqa: E402

ENGINES = {
    "keras": ("keras", None),
    "onnxruntime": ("onnxruntime", None),
    "onnxruntime-int8": ("onnxruntime", "int8"),
    "keras-int8": ("keras", "int8"),
}
MODEL = "demo-spam"


def _macro_f1(gold, predicted, labels):
    scores = []
    for label in labels:
        tp = sum(g == label and p == label for g, p in zip(gold, predicted))
        fp = sum(g != label and p == label for g, p in zip(gold, predicted))
        fn = sum(g == label and p != label for g, p in zip(gold, predicted))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return float(np.mean(scores))


def scores(model, texts, gold):
    """Each engine's labels and spam probabilities on `texts`, and its scores."""
    results = {}
    for name, (engine, quantize) in ENGINES.items():
        outputs = model.classify(texts, engine=engine, quantize=quantize)
        labels = [output.label for output in outputs]
        spam = np.array([output.probabilities["spam"] for output in outputs])
        results[name] = {"labels": labels, "spam": spam,
                         "accuracy": float(np.mean([p == g for p, g in zip(labels, gold)])),
                         "macro_f1": _macro_f1(gold, labels, model.label_names)}
    reference = results["keras"]
    for result in results.values():
        result["agreement"] = float(np.mean(
            [a == b for a, b in zip(result["labels"], reference["labels"])]))
        result["largest_probability_change"] = float(np.max(np.abs(result["spam"] - reference["spam"])))
    return results


def measure(data, rounds=5, warmup=1):
    from kbert.models import BertClassifier

    with tempfile.TemporaryDirectory() as work:
        paths = published_tasks.write_splits("sms", data, pathlib.Path(work), "full")
        examples = published_tasks._read_csv(paths["test"])
    texts, gold = [text for text, _ in examples], [label for _, label in examples]
    model = BertClassifier.from_preset(MODEL)
    found = scores(model, texts, gold)
    timings = {}
    for workload, batch in (("1 message", texts[:1]), (f"{len(texts)} messages", texts)):
        functions = {
            name: (lambda engine=engine, quantize=quantize, batch=batch:
                   model.classify(batch, engine=engine, quantize=quantize))
            for name, (engine, quantize) in ENGINES.items()
        }
        seconds = interleaved_timings(functions, rounds=rounds, warmup=warmup)
        timings[workload] = {name: summarize(values) for name, values in seconds.items()}
    return {
        "model": MODEL,
        "messages": len(texts),
        "scores": {name: {key: value for key, value in result.items() if key not in ("labels", "spam")}
                   for name, result in found.items()},
        "seconds": timings,
        "rounds": rounds,
    }


def format_table(result):
    lines = [f"{result['model']} on {result['messages']} held-out SMS messages "
             f"(medians of {result['rounds']} interleaved rounds)", "",
             "| engine | accuracy | macro-F1 | labels as Keras float32 | largest spam-probability change | "
             + " | ".join(result["seconds"]) + " |",
             "| --- | --- | --- | --- | --- | " + " | ".join("---" for _ in result["seconds"]) + " |"]
    for name, score in result["scores"].items():
        times = [f"{1000 * result['seconds'][w][name]['median']:.1f} ms" for w in result["seconds"]]
        lines.append(f"| {name} | {100 * score['accuracy']:.1f} | {100 * score['macro_f1']:.1f} | "
                     f"{100 * score['agreement']:.1f} % | {score['largest_probability_change']:.4f} | "
                     + " | ".join(times) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=pathlib.Path, help="scripts/fetch_published_data.sh's DEST")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--output", help="also write the result as JSON here")
    args = parser.parse_args(argv)
    result = measure(args.data.resolve(), rounds=args.rounds)
    report(result, format_table(result), args.output)


if __name__ == "__main__":
    sys.exit(main())
