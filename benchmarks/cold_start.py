"""How long `kbert fill-mask` takes from a cold start, as a desktop user feels it.

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

Usage:
    python benchmarks/cold_start.py                      # the bundled demo model
    python benchmarks/cold_start.py --model PRESET --runs 5 --output cold_start.json

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
CACHE_MODES = ("empty", "warm")


def cli_seconds(model, text, environment):
    """Wall seconds of one `kbert fill-mask` process; raises if it fails."""
    command = [sys.executable, "-m", "kbert.cli", "fill-mask", "--model", model, text]
    start = time.perf_counter()
    completed = subprocess.run(command, env=environment, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if completed.returncode != 0:
        raise RuntimeError(
            f"`{' '.join(command)}` failed with status {completed.returncode}: "
            f"{completed.stderr.strip()[-2000:]}"
        )
    return seconds


def app_phases(model, text):
    """Seconds of each phase of loading a model and filling one mask, in this process.

    Returns:
        A dict: `import_keras`, `load`, `first_call`, `load_to_first_result`, and
        `second_call` (the same text again: what a keystroke within the bucket costs).
    """
    start = time.perf_counter()
    import keras  # noqa: F401

    from kbert.models import BertMaskedLM

    imported = time.perf_counter()
    masked_lm = BertMaskedLM.from_preset(model)
    loaded = time.perf_counter()
    masked_lm.fill_mask(text)
    answered = time.perf_counter()
    masked_lm.fill_mask(text)
    answered_again = time.perf_counter()
    return {
        "import_keras": imported - start,
        "load": loaded - imported,
        "first_call": answered - loaded,
        "load_to_first_result": answered - imported,
        "second_call": answered_again - answered,
    }


def app_phases_in_fresh_process(model, text, environment):
    """`app_phases` run in a new Python process (so that imports are cold too)."""
    command = [sys.executable, __file__, "--worker", "--model", model, "--text", text]
    completed = subprocess.run(command, env=environment, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(
            f"The app-phase worker failed with status {completed.returncode}: "
            f"{completed.stderr.strip()[-2000:]}"
        )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def measure(model, text, runs, backend="jax"):
    """Median seconds of the command line and of the app phases, per cache mode.

    Returns:
        `{"empty": {...}, "warm": {...}}`, each with `cli` and the app phases (medians
        in seconds), `cli_min` (the fastest run) and `cli_runs` (every run's seconds).
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"`runs` must be a positive integer. Received: runs={runs!r}")
    # The app phases run in plain Python processes, which get the cache settings of
    # the `kbert` command (see `kbert.cli`) here.
    base = dict(os.environ, KERAS_BACKEND=backend, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    results = {}
    with tempfile.TemporaryDirectory(prefix="kbert-cold-start-") as scratch:
        warm_cache = os.path.join(scratch, "warm")
        # The warm cache is filled by one untimed run of each kind.
        primed = dict(base, JAX_COMPILATION_CACHE_DIR=warm_cache)
        cli_seconds(model, text, primed)
        app_phases_in_fresh_process(model, text, primed)
        for mode in CACHE_MODES:
            cli_runs, app_runs = [], []
            for run in range(runs):
                if mode == "empty":
                    cache = os.path.join(scratch, f"empty-{run}")
                else:
                    cache = warm_cache
                environment = dict(base, JAX_COMPILATION_CACHE_DIR=cache)
                cli_runs.append(cli_seconds(model, text, environment))
                if mode == "empty":
                    environment["JAX_COMPILATION_CACHE_DIR"] = cache + "-app"
                app_runs.append(app_phases_in_fresh_process(model, text, environment))
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
    )
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
    parser.add_argument("--text", default=DEFAULT_TEXT, help=f"(default: {DEFAULT_TEXT!r})")
    parser.add_argument("--runs", type=int, default=5, help="processes per figure (default: 5)")
    parser.add_argument(
        "--backend",
        default=os.environ.get("KERAS_BACKEND", "jax"),
        help="Keras backend of the runs (default: $KERAS_BACKEND, else jax)",
    )
    parser.add_argument("--output", help="also write the figures to this JSON file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(app_phases(args.model, args.text)))
        return 0
    results = measure(args.model, args.text, args.runs, args.backend)
    record = {
        "model": args.model,
        "text": args.text,
        "runs": args.runs,
        "backend": args.backend,
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
