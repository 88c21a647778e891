"""How long `kbert fill-mask` (or `kbert classify`) takes from a cold start, as a user feels it.

Two figures, each the median over `--runs` fresh processes:

- command line: wall seconds of `python -m kbert.cli fill-mask --model M TEXT` (what
  `kbert fill-mask` runs), from process start to exit;
- app: inside one fresh process, the seconds to import Keras, to load the model
  (`BertMaskedLM.from_preset(M)`), to get the first `fill_mask` result, and from the
  start of the load to that first result ("first prediction after model load").

Each is measured twice: with an empty JAX compilation cache (the first run after
installing, or after JAX was upgraded) and with a warm one (every later run; the
`kbert` command keeps compiled programs in `~/.cache/kbert/jax-compilation-cache`).
On TensorFlow and PyTorch the cache does not apply and both rows are alike.

With `--task classify` the same figures are those of `kbert classify` and
`BertClassifier.classify` (the Classify & tag tab's first prediction); a model without
a classifier head (the demo) gets a new two-class one, whose forward pass costs what a
fine-tuned one's does. `--texts N` makes the command line classify a file of N
mixed-length sentences (`kbert classify --file`) and adds the app phase `texts`: one
`classify` call on all of them (the fine-tuning tab's evaluation, an export).

Usage:
    python benchmarks/cold_start.py                      # the bundled demo model
    python benchmarks/cold_start.py --model PRESET --runs 5 --output cold_start.json
    python benchmarks/cold_start.py --task classify --texts 1000 --runs 3

The backend is JAX (the default of kbert's command line and app) unless KERAS_BACKEND
is set or `--backend` is given.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

DEFAULT_TEXT = "Elizabeth [MASK] the letter."
CLASSIFY_TEXT = "Elizabeth read the letter twice, and then she put it away."
CACHE_MODES = ("empty", "warm")
TASKS = ("fill-mask", "classify")


def cli_seconds(model, text, environment, task="fill-mask", texts_file=None):
    """Wall seconds of one `kbert fill-mask` (or `kbert classify`) process on `text`, or
    on the lines of `texts_file`; raises if it fails."""
    command = [sys.executable, "-m", "kbert.cli", task, "--model", model]
    command += ["--file", texts_file] if texts_file else [text]
    start = time.perf_counter()
    completed = subprocess.run(command, env=environment, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if completed.returncode != 0:
        raise RuntimeError(
            f"`{' '.join(command)}` failed with status {completed.returncode}: "
            f"{completed.stderr.strip()[-2000:]}"
        )
    return seconds


def app_phases(model, text, task="fill-mask", texts=None):
    """Seconds of each phase of loading a model and filling one mask (or classifying
    one text), in this process.

    Returns:
        A dict: `import_keras`, `load`, `first_call`, `load_to_first_result`, and
        `second_call` (the same text again: what a keystroke within the bucket costs);
        with `texts`, `texts` too: one call on all of them (the app's evaluation or
        export of a file).
    """
    start = time.perf_counter()
    import keras  # noqa: F401

    from kbert.models import BertClassifier
    from kbert.models import BertMaskedLM

    imported = time.perf_counter()
    if task == "fill-mask":
        loaded_model = BertMaskedLM.from_preset(model)
        predict = loaded_model.fill_mask
    else:
        loaded_model = BertClassifier.from_preset(model)
        predict = loaded_model.classify
    loaded = time.perf_counter()
    predict(text)
    answered = time.perf_counter()
    predict(text)
    answered_again = time.perf_counter()
    phases = {
        "import_keras": imported - start,
        "load": loaded - imported,
        "first_call": answered - loaded,
        "load_to_first_result": answered - imported,
        "second_call": answered_again - answered,
    }
    if texts:
        before = time.perf_counter()
        predict(texts)
        phases["texts"] = time.perf_counter() - before
    return phases


def app_phases_in_fresh_process(model, text, environment, task="fill-mask", texts_file=None):
    """`app_phases` run in a new Python process (so that imports are cold too)."""
    command = [sys.executable, __file__, "--worker", "--model", model, "--text", text,
               "--task", task] + (["--texts-file", texts_file] if texts_file else [])
    return _worker(command, environment, "The app-phase worker")


def classifier_and_texts(model, folder, count, seed=0, onnx_graph=False):
    """A classifier preset in `folder` (`model` itself when it has a classifier head,
    else `model` with a new two-class head trained one step on two sentences, so that
    `kbert classify` takes it: the same forward pass as a fine-tuned one) and, with
    `count`, a file of that many mixed-length sentences of its vocabulary.

    Returns:
        (preset folder, texts file or None).
    """
    import warnings

    from cpu_inference import mixed_sentences

    from kbert.models import BertClassifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the new head's warning
        classifier = BertClassifier.from_preset(model, num_classes=2)
    if classifier.freshly_initialized_heads:
        classifier.fit(["a good day .", "a bad day ."], [1, 0], epochs=1, verbose=0)
    classifier.save_to_preset(folder)
    if onnx_graph:
        # One call on ONNX Runtime caches the graph (into $KBERT_CACHE): what a user
        # does once; "auto" then takes it in every later process.
        BertClassifier.from_preset(folder).classify("the graph is made once", engine="onnxruntime")
    if not count:
        return folder, None
    with open(os.path.join(folder, "vocab.txt"), encoding="utf-8") as handle:
        vocabulary = handle.read().split()
    path = os.path.join(folder, "texts.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(mixed_sentences(count, vocabulary, seed)) + "\n")
    return folder, path


def _worker(command, environment, what):
    completed = subprocess.run(command, env=environment, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(
            f"{what} failed with status {completed.returncode}: "
            f"{completed.stderr.strip()[-2000:]}"
        )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def measure(model, text, runs, backend="jax", task="fill-mask", texts=0, onnx_graph=False):
    """Median seconds of the command line and of the app phases, per cache mode.

    With `task="classify"`, `model` gets a classifier head if it has none, and with
    `texts` the command line classifies a file of that many sentences (`--file`) and
    the app phases include one call on all of them. With `onnx_graph`, the classifier's
    ONNX graph is cached first, so "auto" runs ONNX Runtime (a CPU with onnxruntime).
    Every process gets a kbert cache of its own (`KBERT_CACHE` in a scratch folder).

    Returns:
        `{"empty": {...}, "warm": {...}}`, each with `cli` and the app phases (medians
        in seconds), `cli_min` (the fastest run) and `cli_runs` (every run's seconds).
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"`runs` must be a positive integer. Received: runs={runs!r}")
    if task not in TASKS:
        raise ValueError(f"`task` must be one of {TASKS}. Received: task={task!r}")
    if texts and task != "classify":
        raise ValueError("`texts` needs task='classify' (fill-mask takes one text).")
    # The app phases run in plain Python processes, which get the cache settings of
    # the `kbert` command (see `kbert.cli`) here.
    base = dict(os.environ, KERAS_BACKEND=backend, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    results = {}
    with tempfile.TemporaryDirectory(prefix="kbert-cold-start-") as scratch:
        base["KBERT_CACHE"] = os.path.join(scratch, "kbert-cache")
        texts_file = None
        if task == "classify":
            model, texts_file = _worker(
                [sys.executable, __file__, "--make-classifier", os.path.join(scratch, "model"),
                 "--model", model, "--texts", str(texts)] + (["--onnx-graph"] if onnx_graph else []),
                dict(base, JAX_COMPILATION_CACHE_DIR=""), "Making the classifier",
            )
        warm_cache = os.path.join(scratch, "warm")
        # The warm cache is filled by one untimed run of each kind.
        primed = dict(base, JAX_COMPILATION_CACHE_DIR=warm_cache)
        cli_seconds(model, text, primed, task, texts_file)
        app_phases_in_fresh_process(model, text, primed, task, texts_file)
        for mode in CACHE_MODES:
            cli_runs, app_runs = [], []
            for run in range(runs):
                if mode == "empty":
                    cache = os.path.join(scratch, f"empty-{run}")
                else:
                    cache = warm_cache
                environment = dict(base, JAX_COMPILATION_CACHE_DIR=cache)
                cli_runs.append(cli_seconds(model, text, environment, task, texts_file))
                if mode == "empty":
                    environment["JAX_COMPILATION_CACHE_DIR"] = cache + "-app"
                app_runs.append(
                    app_phases_in_fresh_process(model, text, environment, task, texts_file)
                )
            summary = {
                "cli": statistics.median(cli_runs),
                "cli_min": min(cli_runs),
                "cli_runs": cli_runs,
            }
            for phase in app_runs[0]:
                summary[phase] = statistics.median(run[phase] for run in app_runs)
            results[mode] = summary
    return results


def format_table(results):
    phases = (
        "cli", "cli_min", "import_keras", "load", "first_call", "load_to_first_result",
        "second_call",
    ) + (("texts",) if "texts" in next(iter(results.values())) else ())
    lines = [
        "seconds (medians; cli_min: the fastest command-line run)",
        f"{'JAX cache':<10}" + "".join(f"{phase:>21}" for phase in phases),
    ]
    for mode, summary in results.items():
        lines.append(f"{mode:<10}" + "".join(f"{summary[phase]:>21.3f}" for phase in phases))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="demo", help="preset folder or name (default: demo)")
    parser.add_argument("--task", choices=TASKS, default="fill-mask",
                        help="classify: the model gets a two-class head if it has none "
                        "(default: fill-mask)")
    parser.add_argument("--text", help=f"(default: {DEFAULT_TEXT!r}, or {CLASSIFY_TEXT!r})")
    parser.add_argument("--texts", type=int, default=0,
                        help="classify: the command line classifies a file of this many "
                        "mixed-length sentences, and the app phases add one call on them")
    parser.add_argument("--runs", type=int, default=5, help="processes per figure (default: 5)")
    parser.add_argument(
        "--backend",
        default=os.environ.get("KERAS_BACKEND", "jax"),
        help="Keras backend of the runs (default: $KERAS_BACKEND, else jax)",
    )
    parser.add_argument("--onnx-graph", action="store_true",
                        help="classify: cache the classifier's ONNX graph first, so that "
                        "engine='auto' runs ONNX Runtime")
    parser.add_argument("--output", help="also write the figures to this JSON file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--texts-file", help=argparse.SUPPRESS)
    parser.add_argument("--make-classifier", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    text = args.text or (CLASSIFY_TEXT if args.task == "classify" else DEFAULT_TEXT)
    if args.make_classifier:
        print(json.dumps(classifier_and_texts(args.model, args.make_classifier, args.texts,
                                              onnx_graph=args.onnx_graph)))
        return 0
    if args.worker:
        texts = None
        if args.texts_file:
            with open(args.texts_file, encoding="utf-8") as handle:
                texts = handle.read().splitlines()
        print(json.dumps(app_phases(args.model, text, args.task, texts)))
        return 0
    if args.onnx_graph and args.task != "classify":
        parser.error("--onnx-graph needs --task classify")
    results = measure(args.model, text, args.runs, args.backend, args.task, args.texts,
                      args.onnx_graph)
    record = {
        "model": args.model,
        "task": args.task,
        "texts": args.texts,
        "text": text,
        "runs": args.runs,
        "backend": args.backend,
        "onnx_graph": args.onnx_graph,
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "seconds": results,
    }
    print(format_table(results))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as file:
            json.dump(record, file, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
