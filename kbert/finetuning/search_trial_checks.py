"""What a search reads back from its journal, checked against the search before use.

The journal's records are well-formed (`journal_records`), but their values are the
search's own: a trial's index, its point and its row of scores. A journal edited by
hand, or shared with another machine, could name a trial that does not exist, a
learning rate outside the searched range, or a folder outside the search; each is
refused with one sentence naming the journal, before anything is trained or copied.
"""

import math
import os

from kbert.finetuning.search_journal import REMEDY


def checked_index(trial, total_trials, journal):
    """The `trial_index` user attribute of an Optuna trial: an int in [0, total_trials)."""
    index = trial.user_attrs.get("trial_index")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < total_trials:
        raise ValueError(
            f"{journal}: Optuna trial {trial.number} has the trial index {index!r}, not one "
            f"of this search's 0 to {total_trials - 1}. {REMEDY}"
        )
    return index


def checked_params(params, space, grid, journal, index):
    """The settings a trial was drawn with, which must lie in the search's `space` (a trial
    stopped while drawing has some or none of them: the rest are drawn when it runs)."""
    point = {name: value for name, value in params.items() if not (grid and name == "restart")}
    if not space.contains(point, partial=True):
        raise ValueError(
            f"{journal}: trial {index} has the settings {_shown(point)}, outside the search's "
            f"space {space.to_dict()}. {REMEDY}"
        )
    return params


def checked_row(row, index, metric, expected_folder, journal):
    """A finished trial's row of scores: its index, a finite metric and its own folder."""
    problem = None
    if not isinstance(row, dict):
        problem = "has no row of scores"
    elif row.get("trial") != index or isinstance(row.get("trial"), bool):
        problem = f"has the row of trial {_shown(row.get('trial'))}"
    elif not _is_finite_number(row.get(metric)):
        problem = f"has no {metric} score (found {_shown(row.get(metric))})"
    elif row.get("folder") != expected_folder:
        problem = (
            f"names the folder {_shown(row.get('folder'))} instead of {expected_folder!r}"
        )
    if problem is not None:
        raise ValueError(f"{journal}: trial {index} {problem}. {REMEDY}")
    return row


def relative_folder(folder, output_dir):
    """`folder` relative to `output_dir`, as rows record it."""
    return os.path.relpath(folder, output_dir)


def _is_finite_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
