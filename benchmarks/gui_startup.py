"""Seconds from launching the desktop app to its window being shown.

Starts `python -m kbert_gui` as a fresh process several times (the app prints when its window
is shown, with KBERT_GUI_REPORT_STARTUP=1), measures from before the process starts to
that line, and stops the app. The median is the figure that counts: the issue asks for a
visible window within 2 s on a 2-core machine.

    python benchmarks/gui_startup.py [--runs 5] [--output gui_startup.json]

Uses the offscreen Qt platform unless QT_QPA_PLATFORM is set (e.g. under xvfb-run).
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
SHOWN = "window shown after"


def launch_once(model, timeout_s):
    """Seconds from `Popen` to the app's "window shown" line."""
    environment = dict(os.environ, KBERT_GUI_REPORT_STARTUP="1")
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
    try:
        deadline = started + timeout_s
        for line in process.stdout:
            if line.startswith(SHOWN):
                return time.perf_counter() - started
            if time.perf_counter() > deadline:
                break
        raise RuntimeError(f"The app did not report a shown window within {timeout_s} s.")
    finally:
        process.kill()
        process.wait()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--model", default="demo")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--output", help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    seconds = [launch_once(args.model, args.timeout) for _ in range(args.runs)]
    report = {
        "runs": args.runs,
        "seconds": [round(value, 3) for value in seconds],
        "median_s": round(statistics.median(seconds), 3),
        "platform": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        "cpus": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    print(
        f"window shown after {report['median_s']:.2f} s (median of {args.runs}; "
        f"runs {', '.join(f'{value:.2f}' for value in seconds)}; load {report['load_average_1min']})"
    )
    if args.output:
        pathlib.Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
