"""What a fine-tuning search returns: one row per trial and the best of them."""

import csv
import io
from dataclasses import dataclass

# How a search ended in this process.
SEARCH_COMPLETED = "completed"  # every trial finished; OUTPUT/model is the best
SEARCH_INCOMPLETE = "incomplete"  # no trial left to start here; others still run elsewhere
SEARCH_CANCELLED = "cancelled"


@dataclass(frozen=True)
class SearchResult:
    """The outcome of `FineTuningSearch.run`.

    Args:
        status: "completed" (every trial finished, the best kept as `preset_path`),
            "incomplete" (this process found no trial left to start while other
            processes still ran some; the last one to finish keeps the best) or
            "cancelled".
        metric: the dev metric that ranks the trials.
        trials: one row per finished trial, by trial number: its hyperparameters,
            seed, restart, dev metrics of its best epoch, time and folder.
        best: the row of the best trial so far (None before any finished).
        preset_path: `OUTPUT/model`, a copy of the best trial's model, once every
            trial finished; else None.
        table_paths: the CSV and JSON files holding `trials`.
        total_trials: grid points times restarts.
        trials_run: trials this process ran (resumed ones included).
    """

    status: str
    metric: str
    trials: list
    best: object
    preset_path: object
    table_paths: tuple
    total_trials: int
    trials_run: int

    @property
    def cancelled(self):
        return self.status == SEARCH_CANCELLED

    def to_dict(self):
        """The result as JSON-ready plain data."""
        return {
            "status": self.status,
            "metric": self.metric,
            "best": self.best,
            "preset_path": None if self.preset_path is None else str(self.preset_path),
            "table_paths": [str(path) for path in self.table_paths],
            "total_trials": self.total_trials,
            "trials_run": self.trials_run,
            "trials": [dict(row) for row in self.trials],
        }


def table_columns(rows):
    """The columns of `rows` in first-seen order (rows may differ in their metrics)."""
    columns = []
    for row in rows:
        columns.extend(key for key in row if key not in columns)
    return columns


def table_csv(rows):
    """`rows` as CSV text with a header line."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=table_columns(rows), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()
