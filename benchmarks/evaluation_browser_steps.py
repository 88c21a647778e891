"""How long each step of the evaluation browser holds the UI thread, on many rows.

Builds an `EvaluationBrowser` over a synthetic classification evaluation (no model:
random labels, probabilities and texts), then times, call by call, what a user does:
building the window, showing it (its first layout and paint), a sort by probability
and one by text, a confusion-matrix cell, errors only, every row again, and a repaint
of the rows in view. Each figure is the median of `--repeats` fresh windows, with
the events each step posts processed inside its time.

    python benchmarks/evaluation_browser_steps.py [--rows 10000] [--repeats 3]

Uses the offscreen Qt platform unless QT_QPA_PLATFORM is set. The machine's load
average is printed beside the figures.
"""

import argparse
import os
import pathlib
import random
import statistics
import sys
import time

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))
WORDS = ("the", "ball", "she", "danced", "letter", "read", "twice", "every")
COLUMNS = ("index", "line", "text", "gold", "predicted", "probability", "correct")


def synthetic_predictions(count, seed=0):
    """An `EvaluationPredictions` of `count` classified texts, half of them wrong."""
    from kbert.finetuning.evaluation_predictions import EvaluationPredictions

    generator = random.Random(seed)
    rows = []
    for index in range(count):
        gold, predicted = generator.choice(("neg", "pos")), generator.choice(("neg", "pos"))
        words = generator.choices(WORDS, k=generator.randint(5, 30))
        rows.append(dict(
            index=index, line=index + 2, text=" ".join(words), gold=gold,
            predicted=predicted, probability=generator.random(), correct=gold == predicted,
        ))
    return EvaluationPredictions(
        "classification", COLUMNS, tuple(rows), {"accuracy": 0.5}, ("neg", "pos")
    )


def time_steps(app, predictions):
    """{step: milliseconds} for one fresh window over `predictions`."""
    from PySide6.QtCore import Qt

    from kbert_gui.evaluation.evaluation_browser import EvaluationBrowser

    timings, browser = {}, None

    def build():
        nonlocal browser
        browser = EvaluationBrowser(predictions, "synthetic", file_dialogs=None)

    def sort_by(key, order):
        column = browser.rows_model.keys.index(key)
        return lambda: browser.table.horizontalHeader().setSortIndicator(column, order)

    steps = [
        ("build", build),
        ("show (first layout and paint)", lambda: browser.show()),
        ("sort by probability", lambda: sort_by("probability", Qt.SortOrder.DescendingOrder)()),
        ("sort by text", lambda: sort_by("text", Qt.SortOrder.AscendingOrder)()),
        ("confusion-matrix cell", lambda: browser.show_pair(browser.matrix_model.index(0, 1))),
        ("errors only", lambda: browser.filter_bar.errors_only.setChecked(True)),
        ("every row again", lambda: browser.filter_bar.clear()),
        ("repaint of the rows in view", lambda: browser.table.viewport().repaint()),
    ]
    for name, step in steps:
        started = time.perf_counter()
        step()
        app.processEvents()
        timings[name] = (time.perf_counter() - started) * 1000
    browser.close()
    browser.deleteLater()
    app.processEvents()
    return timings


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    predictions = synthetic_predictions(args.rows)
    runs = [time_steps(app, predictions) for _ in range(args.repeats)]
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"{args.rows} rows, median of {args.repeats} windows (load average {load}):")
    for name in runs[0]:
        values = [run[name] for run in runs]
        print(f"  {name:<30} {statistics.median(values):7.1f} ms  (max {max(values):.1f})")


if __name__ == "__main__":
    sys.exit(main())
