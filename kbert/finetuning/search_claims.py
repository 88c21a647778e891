"""Which process runs which trial of a fine-tuning search: claims on the shared Optuna study.

Every process sharing a search looks at the study's trials under one file lock (the
claim lock), then takes the next trial nobody has finished or is running: a grid's
next point, a failed or abandoned trial again with the point it had, or a new point
drawn by TPE. The process then holds the trial folder's `OutputLock` while it runs the
trial, which is how the others tell a running trial from an abandoned one.
"""

import contextlib
import logging

from kbert.files import OutputLock
from kbert.files import OutputLockedError
from kbert.finetuning.search_trial_checks import checked_index
from kbert.finetuning.search_trial_checks import checked_params

logger = logging.getLogger("kbert.finetuning")


@contextlib.contextmanager
def claim_lock(optuna, path):
    """One process at a time looks at the trials and takes one (Optuna's file lock at
    `path`)."""
    lock = optuna.storages.journal.JournalFileOpenLock(str(path))
    lock.acquire()  # Blocks; a lock left by a killed process expires after 30 s.
    try:
        yield
    finally:
        lock.release()


def claim_trial(optuna, study, search):
    """`(trial, index, lock)` of the next trial for this process, its folder locked and
    its point drawn; None when every trial has finished or another process runs it.

    Call it holding `claim_lock`. A trial that failed or was abandoned is run again
    with the point it had (its folder holds a checkpoint of that configuration).

    Args:
        optuna: the `optuna` module.
        study: the search's study.
        search: the `FineTuningSearch` (its space, trials, seed and trial folders).
    """
    states = optuna.trial.TrialState
    finished, taken, unfinished = set(), set(), {}
    for trial in study.get_trials(deepcopy=False):
        index = checked_index(trial, search.total_trials, search.journal)
        if trial.state == states.COMPLETE:
            finished.add(index)
        elif trial.state == states.WAITING:
            taken.add(index)
        elif trial.state == states.RUNNING and _is_running(search.trial_folder(index)):
            taken.add(index)
        else:
            if trial.state == states.RUNNING:
                logger.info("Trial %d was abandoned (its process ended).", index)
                study.tell(trial.number, state=states.FAIL)
            unfinished.setdefault(index, _checked_params(search, trial.params, index))
    if search.grid_trials is not None:
        unfinished = {i: _grid_params(search, i) for i in range(search.total_trials)}
    for index, params in sorted(unfinished.items()):
        if index not in finished and index not in taken:
            study.enqueue_trial(params, user_attrs={"trial_index": index})
            taken.add(index)
    used = finished | taken
    if study.get_trials(deepcopy=False, states=(states.WAITING,)):
        trial = study.ask()
    elif len(used) < search.total_trials:
        # A new point: TPE seeded by the trial's index, so that processes sharing
        # the search draw different points, the same ones whichever draws them.
        index = min(set(range(search.total_trials)) - used)
        study.sampler = optuna.samplers.TPESampler(seed=search.config.seed + index)
        trial = study.ask()
        trial.set_user_attr("trial_index", index)
    else:
        return None
    index = checked_index(trial, search.total_trials, search.journal)
    trial.set_user_attr("point", search.space.draw(trial))
    if search.grid_trials is not None:
        trial.suggest_categorical("restart", list(range(search.restarts)))
    lock = OutputLock(search.trial_folder(index))
    lock.acquire()
    return trial, index, lock


def _is_running(folder):
    """Whether some process holds a trial's `folder` (runs the trial)."""
    lock = OutputLock(folder)
    try:
        lock.acquire()
    except OutputLockedError:
        return True
    lock.release()
    return False


def _checked_params(search, params, index):
    return checked_params(
        params, search.space, search.grid_trials is not None, search.journal, index
    )


def _grid_params(search, index):
    point, restart = search.grid_trials[index]
    return dict(point, restart=restart)
