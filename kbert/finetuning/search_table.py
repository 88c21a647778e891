"""The table of a fine-tuning search: one row per finished trial, written as CSV and JSON."""

import math
import os
import socket

from kbert.files import write_json_atomically
from kbert.files import write_text_atomically
from kbert.finetuning.search_result import table_csv


def trial_row(index, point, restart, config, result, seconds, folder):
    """The row of a finished trial: its point, seed, best score and that epoch's logs.

    Args:
        index: the trial's number in the search, from 0.
        point: the trial's settings (a dict).
        restart: the restart of a grid point (0 for drawn points).
        config: the trial's `FineTuningConfig`.
        result: the trial's `FineTuningResult`.
        seconds: how long the trial ran.
        folder: the trial's folder, relative to the search's.
    """
    best_logs = next(e for e in result.history if e["epoch"] == result.best_epoch)
    row = {"trial": index, **point, "restart": restart, "seed": config.seed}
    row["status"] = result.status
    row[result.metric] = result.best_metric
    row["best_epoch"] = result.best_epoch
    for key, value in best_logs.items():
        if key not in ("epoch", "learning_rate", result.metric):
            row["train_loss" if key == "loss" else key] = _plain(value)
    row["time_s"] = round(seconds, 3)
    row["process"] = f"{socket.gethostname()}:{os.getpid()}"
    row["folder"] = folder
    return row


def best_row(rows, metric):
    """The row with the best `metric` (the first trial among equals); None without rows."""
    return max(rows, key=lambda row: (row[metric], -row["trial"])) if rows else None


def write_search_table(csv_path, json_path, rows, metric, search):
    """Writes the rows as CSV and, with the search's settings, as JSON (atomically).

    Args:
        csv_path: the CSV file.
        json_path: the JSON file.
        rows: the finished trials' rows, in trial order.
        metric: the task metric that ranks them.
        search: the `FineTuningSearch` (its space, restarts and number of trials).
    """
    best = best_row(rows, metric)
    write_text_atomically(csv_path, table_csv(rows) if rows else "")
    write_json_atomically(
        json_path,
        {
            "metric": metric,
            "best_trial": None if best is None else best["trial"],
            "total_trials": search.total_trials,
            "space": search.space.to_dict(),
            "restarts": search.restarts,
            "trials": rows,
        },
        sort_keys=False,
    )


def _plain(value):
    """A JSON-ready number (None for a NaN or infinity)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
