"""The first prediction of a fresh process: `kbert classify` on a model never run before,
whole process, against transformers' pipeline in a fresh process on the same weights.

One random-init `BertForSequenceClassification` (seeded, 2 labels, a made-up vocabulary;
no download) is saved with `save_pretrained` and converted once into a kbert preset
(`kbert convert`, not timed). Every figure is the wall time of one new process, from its
start to its exit (imports, model load, the prediction, printing), the median of
`--runs`:

- `kbert`: `kbert classify --model PRESET` on one sentence (an argument) or on
  `--file` with 64 mixed sentences; `engine="auto"` as a user gets it;
- `kbert-sync`: the same, with "auto" making a missing graph before it answers at any
  size (`SYNCHRONOUS_EXPORT_BYTES` raised): export then ONNX Runtime, against
  `kbert`'s Keras while the graph is made in the background;
- `kbert-keras`: the same with `--engine keras`;
- `transformers`: `pipeline("text-classification", model=FOLDER)` on the same texts,
  on PyTorch, in batches of 8 (kbert's batch on a CPU).

Each kbert row is measured in two cache states: `never` (an empty kbert cache: no ONNX
graph, no compiled JAX program, as after installing kbert or fine-tuning a new model;
a new cache for every run) and `after` (the cache that one earlier untimed run of the
same command left: the graph "auto" made, JAX's compiled programs). The export itself
is timed in one more process (`export_seconds`: `export_graph` of the loaded model).

Usage:
    python benchmarks/first_call.py                       # BERT-base, 3 runs
    python benchmarks/first_call.py --size tiny --runs 5 --output first_call.json

kbert runs on JAX (its command line's default); transformers on PyTorch.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROWS = ("kbert", "kbert-sync", "kbert-keras", "transformers")
CACHE_STATES = ("never", "after")
# `python -c` bodies of the timed processes; argv: the model folder, then the texts file
# or the one sentence (a file when it ends in .txt).
_KBERT = """
import sys
{setup}
from kbert.cli import main
model, texts = sys.argv[1], sys.argv[2]
arguments = ["--file", texts] if texts.endswith(".txt") else [texts]
sys.exit(main(["classify", "--model", model, *{engine}, *arguments]))
"""
_SYNC = "from kbert.inference import inference_engine\ninference_engine.SYNCHRONOUS_EXPORT_BYTES = 2**62"
_TRANSFORMERS = """
import sys
from transformers import pipeline
model, texts = sys.argv[1], sys.argv[2]
if texts.endswith(".txt"):
    with open(texts, encoding="utf-8") as file:
        texts = [line.strip() for line in file if line.strip()]
classify = pipeline("text-classification", model=model, device="cpu")
for result in classify(texts if isinstance(texts, list) else [texts], batch_size=8):
    print(result["label"], round(result["score"], 4))
"""
_EXPORT = """
import sys, time
from kbert.models import BertClassifier
from kbert.inference.onnx_export import export_graph
model = BertClassifier.from_preset(sys.argv[1])
start = time.perf_counter()
export_graph(model, sys.argv[2])
print(time.perf_counter() - start)
"""


def script(row):
    if row == "transformers":
        return _TRANSFORMERS
    setup = _SYNC if row == "kbert-sync" else ""
    engine = ["--engine", "keras"] if row == "kbert-keras" else []
    return _KBERT.format(setup=setup, engine=engine)


def environment(cache):
    """The process's environment: kbert's cache at `cache`, JAX, logs quiet."""
    variables = {key: value for key, value in os.environ.items()
                 if key not in ("JAX_COMPILATION_CACHE_DIR", "KERAS_BACKEND")}
    variables.update(KBERT_CACHE=str(cache), TF_CPP_MIN_LOG_LEVEL="3",
                     TOKENIZERS_PARALLELISM="false")
    return variables


def process_seconds(code, arguments, cache):
    """Wall seconds of `python -c code *arguments`, start to exit; raises if it fails."""
    start = time.perf_counter()
    completed = subprocess.run([sys.executable, "-c", code, *arguments], env=environment(cache),
                               capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if completed.returncode != 0:
        raise RuntimeError(f"{arguments} failed: {completed.stderr.strip()[-2000:]}")
    return seconds


def measure(row, model, texts, state, scratch, runs):
    """`runs` wall times of `row` on `texts` in cache state `state` (fresh caches under
    `scratch`)."""
    seconds = []
    primed = tempfile.mkdtemp(dir=scratch)
    if state == "after":
        process_seconds(script(row), [model, texts], primed)  # what one earlier run leaves
    for _ in range(runs):
        cache = primed if state == "after" else tempfile.mkdtemp(dir=scratch)
        seconds.append(process_seconds(script(row), [model, texts], cache))
    return seconds


def prepare(folder, size, vocabulary_size, count):
    """(Hugging Face folder, kbert preset, texts file of `count` sentences, one sentence)."""
    from cpu_fill_mask import write_huggingface_checkpoint
    from cpu_inference import mixed_sentences
    from random_preset import made_up_vocabulary

    huggingface = os.path.join(folder, "huggingface")
    preset = os.path.join(folder, "kbert")
    write_huggingface_checkpoint(huggingface, size, vocabulary_size, seed=0,
                                 head="BertForSequenceClassification", num_labels=2)
    convert = "import sys\nfrom kbert.cli import main\nsys.exit(main(sys.argv[1:]))"
    process_seconds(convert, ["convert", huggingface, preset], os.path.join(folder, "convert"))
    vocabulary = made_up_vocabulary(vocabulary_size)
    texts = os.path.join(folder, "texts.txt")
    with open(texts, "w", encoding="utf-8") as file:
        file.write("".join(line + "\n" for line in mixed_sentences(count, vocabulary)))
    return huggingface, preset, texts, mixed_sentences(1, vocabulary)[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="base", help="BERT size (default: base)")
    parser.add_argument("--vocabulary-size", type=int, default=30522)
    parser.add_argument("--texts", type=int, default=64, help="the many-sentence workload")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=ROWS)
    parser.add_argument("--output", help="also write the results here as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kbert-first-call-") as folder:
        huggingface, preset, texts, sentence = prepare(
            folder, args.size, args.vocabulary_size, args.texts)
        export = [float(subprocess.run(
            [sys.executable, "-c", _EXPORT, preset, os.path.join(folder, "export.onnx")],
            env=environment(os.path.join(folder, "export")), capture_output=True, text=True,
            check=True).stdout.strip()) for _ in range(args.runs)]
        results = {"size": args.size, "runs": args.runs, "export_seconds": export, "rows": []}
        for workload, argument in (("1", sentence), (str(args.texts), texts)):
            for row in args.rows:
                model = huggingface if row == "transformers" else preset
                for state in CACHE_STATES if row != "transformers" else ("never",):
                    seconds = measure(row, model, argument, state, folder, args.runs)
                    results["rows"].append({"sentences": workload, "row": row, "cache": state,
                                            "median_s": statistics.median(seconds),
                                            "seconds": seconds})
                    print(f"{workload:>4} sentences  {row:<13} {state:<6} "
                          f"{statistics.median(seconds):6.2f} s  {seconds}", flush=True)
        print(f"export_graph: median {statistics.median(export):.2f} s {export}")
    if args.output:
        with open(args.output, "w", encoding="utf-8") as file:
            json.dump(results, file, indent=2)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
