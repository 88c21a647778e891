"""Seconds from launching the desktop app to its window, and to its first prediction.

Starts `python -m kbert_gui` as a fresh process several times (with
KBERT_GUI_REPORT_STARTUP=1 the app prints when its window is shown and when the
"Masked words" tab shows its first prediction on the example text), measures from before the
process starts to each line, and stops the app. Medians are the figures that count:
the issue asks for the first prediction on the demo within 3 s on an idle 2-core
machine.

Two cases, as a user meets them:

- `warm`: JAX's compilation cache (which the app keeps as the `kbert` command does)
  already holds the model's programs, as at every start after the first; one
  launch that is not counted fills it first.
- `cold`: an empty compilation cache at each launch, as at the very first start.

Beside the wall-clock seconds, the CPU seconds the app had used at its first
prediction (all its threads): on a loaded machine the wall clock includes waiting
for a core, which the CPU seconds do not.

Each case gets its own temporary cache folder, so the user's cache is neither read
nor changed. The machine's load average is reported beside the figures: on a shared
machine they are only comparable at a similar load.

    python benchmarks/gui_startup.py [--runs 5] [--cases warm cold] [--output gui_startup.json]

Uses the offscreen Qt platform unless QT_QPA_PLATFORM is set (e.g. under xvfb-run).
"""

import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
SHOWN = "window shown after"
PREDICTED = "first prediction after"
CPU_SECONDS = re.compile(r"\(cpu ([0-9.]+) s\)")


def launch_once(model, timeout_s, cache_dir):
    """`(window_s, prediction_s, prediction_cpu_s)`: seconds from `Popen` to each of the
    app's lines, and the CPU seconds the app had used at its first prediction."""
    environment = dict(
        os.environ, KBERT_GUI_REPORT_STARTUP="1", JAX_COMPILATION_CACHE_DIR=str(cache_dir)
    )
    environment.setdefault("QT_QPA_PLATFORM", "offscreen")
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "kbert_gui", "--model", model],
        cwd=REPOSITORY,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    window_s = None
    try:
        deadline = started + timeout_s
        for line in process.stdout:
            if line.startswith(SHOWN):
                window_s = time.perf_counter() - started
            elif line.startswith(PREDICTED):
                cpu_s = float(CPU_SECONDS.search(line).group(1))
                return window_s, time.perf_counter() - started, cpu_s
            if time.perf_counter() > deadline:
                break
        raise RuntimeError(f"The app did not show a prediction within {timeout_s} s.")
    finally:
        process.kill()
        process.wait()


def measure(case, runs, model, timeout_s):
    """The figures of one case ("warm" or "cold")."""
    window, prediction, cpu = [], [], []
    with tempfile.TemporaryDirectory(prefix=f"kbert-jax-cache-{case}-") as folder:
        if case == "warm":
            launch_once(model, timeout_s, folder)
        for run in range(runs):
            cache = folder if case == "warm" else pathlib.Path(folder) / f"run-{run}"
            window_s, prediction_s, cpu_s = launch_once(model, timeout_s, cache)
            window.append(window_s)
            prediction.append(prediction_s)
            cpu.append(cpu_s)
    return {
        "window_s": [round(value, 3) for value in window],
        "first_prediction_s": [round(value, 3) for value in prediction],
        "first_prediction_cpu_s": cpu,
        "median_window_s": round(statistics.median(window), 3),
        "median_first_prediction_s": round(statistics.median(prediction), 3),
        "median_first_prediction_cpu_s": round(statistics.median(cpu), 3),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cases", nargs="+", choices=("warm", "cold"), default=["warm", "cold"])
    parser.add_argument("--model", default="demo")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--output", help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    report = {
        "runs": args.runs,
        "model": args.model,
        "backend": os.environ.get("KERAS_BACKEND", "jax"),
        "platform": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        "cpus": os.cpu_count(),
        "load_average_1min_before": round(load_before, 2),
    }
    for case in args.cases:
        report[case] = measure(case, args.runs, args.model, args.timeout)
        figures = report[case]
        print(
            f"{case} compilation cache: window {figures['median_window_s']:.2f} s, first "
            f"prediction {figures['median_first_prediction_s']:.2f} s, "
            f"{figures['median_first_prediction_cpu_s']:.2f} CPU s (medians of "
            f"{args.runs}; predictions "
            f"{', '.join(f'{value:.2f}' for value in figures['first_prediction_s'])})"
        )
    report["load_average_1min_after"] = round(os.getloadavg()[0], 2)
    print(
        f"load average (1 min) {report['load_average_1min_before']} before, "
        f"{report['load_average_1min_after']} after, on {report['cpus']} CPUs"
    )
    if args.output:
        pathlib.Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
