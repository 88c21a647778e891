"""A fine-tuning search (BERT's Appendix A.3 grid, any grid times restarts, or ranges drawn
by Optuna's TPE sampler) on Optuna.

Each trial is a full `FineTuner` run in its own folder; the search itself is an Optuna
study in a journal file of the output folder, which any number of processes, on one
machine or on several sharing the folder, work through together.
"""

import json
import logging
import pathlib
import time

from kbert.finetuning.search_folder import JOURNAL_FILE
from kbert.finetuning.search_folder import TABLE_CSV
from kbert.finetuning.search_folder import TABLE_JSON
from kbert.files.atomic_folder import staged_folder
from kbert.files.checked_copy import copy_folder_checked
from kbert.finetuning.recipe_registry import make_recipe
from kbert.finetuning.fine_tuner import FineTuner
from kbert.finetuning.fine_tuning_config import FineTuningConfig
from kbert.finetuning.fine_tuning_result import CANCELLED
from kbert.finetuning.search_result import SEARCH_CANCELLED
from kbert.finetuning.search_result import SEARCH_COMPLETED
from kbert.finetuning.search_result import SEARCH_INCOMPLETE
from kbert.finetuning.search_result import SearchResult
from kbert.finetuning.search_claims import claim_lock
from kbert.finetuning.search_claims import claim_trial
from kbert.finetuning.search_journal import search_journal_backend
from kbert.finetuning.search_space import SearchSpace
from kbert.finetuning.search_table import best_row
from kbert.finetuning.search_table import trial_row
from kbert.finetuning.search_table import write_search_table
from kbert.finetuning.search_trial_checks import checked_index
from kbert.finetuning.search_trial_checks import checked_row
from kbert.finetuning.search_trial_checks import relative_folder
from kbert.optional_packages import require_extra
from kbert.training.run_state import MODEL_FOLDER

logger = logging.getLogger("kbert.finetuning")

STUDY_NAME = "kbert-search"
CLAIM_LOCK_FILE = "search_claims"  # its ".lock" is held while a process picks a trial
TRIALS_FOLDER = "trials"


class FineTuningSearch:
    """Fine-tunes once per trial; keeps the best by the dev metric.

    For a grid, the trials are every point of `space` times `restarts` seeds
    (`config.seed`, `config.seed + 1`, ...: the paper's random restarts, which change the
    new head's initialisation, dropout and the data order). For a space with ranges, the
    trials are `trials` points drawn by Optuna's TPE sampler, each from what the
    finished trials scored (the first ones at random). Trial `i` fine-tunes in
    `output_dir/trials/trial-iii` with `config` changed by its point; it is scored on
    the evaluation data after every epoch and its best epoch counts. When every trial
    has finished, the best one's model is copied to `output_dir/model`, and
    `output_dir/search_trials.csv` and `.json` hold the table of every trial.

    Sharing and resuming go through Optuna: the study lives in
    `output_dir/search.journal` (`optuna.storages.JournalStorage`, safe for several
    processes and for a folder shared between machines), each trial an enqueued Optuna
    trial that one process pops. Several processes running the same search on the same
    folder split its trials; a finished trial is never run again. A process holds its
    trial folder's `OutputLock` while it runs the trial, so a trial whose process died
    (the kernel drops its lock) is seen as abandoned by the next process that looks and
    run again, continuing from its training checkpoint.

    Args:
        task: a `FineTuningRecipe` or a task name.
        preset: the preset every trial starts from.
        output_dir: the search's folder (new or holding this same search).
        space: a `SearchSpace`, or its text ("paper", "learning_rate=3e-5,2e-5;...").
        config: the `FineTuningConfig` the trials change; None for the defaults.
        restarts: seeds per grid point (a grid only).
        callbacks: passed to every trial's `FineTuner`; those with `on_trial_end(row)`
            hear of every finished trial.
        cancellation: an object with `is_set()`, checked after every batch.
        trials: how many points a space with ranges draws (required for one, and
            only for one: a grid runs every point).

    Example:

    >>> search = FineTuningSearch("classification", "bert-base-uncased", "runs/sst2",
    ...                           "paper", restarts=2)
    >>> result = search.run("train.csv", "dev.csv")
    >>> result.best["accuracy"], result.preset_path
    """

    def __init__(
        self, task, preset, output_dir, space, config=None, restarts=1, callbacks=(),
        cancellation=None, trials=None,
    ):
        self.task = make_recipe(task) if isinstance(task, str) else task
        self.preset = preset
        self.output_dir = pathlib.Path(output_dir).expanduser()
        self.space = space if isinstance(space, SearchSpace) else SearchSpace.parse(space)
        self.config = config if config is not None else FineTuningConfig()
        if isinstance(restarts, bool) or not isinstance(restarts, int) or restarts < 1:
            raise ValueError(f"`restarts` must be an integer >= 1. Received: restarts={restarts!r}")
        self.restarts = restarts
        self.callbacks = list(callbacks)
        self.cancellation = cancellation
        if self.space.sampled:
            if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
                raise ValueError(
                    "A search over ranges draws its points: give the number of trials "
                    f"(`trials`, --trials N) as an integer >= 1. Received: trials={trials!r}"
                )
            if restarts != 1:
                raise ValueError(
                    "Restarts go with a grid; a search over ranges draws a new point (and "
                    "seed) for every trial: raise the number of trials instead."
                )
            self.grid_trials = None
            self.total_trials = trials
        else:
            if trials is not None:
                raise ValueError(
                    "A grid runs every point (times the restarts); the number of trials "
                    f"goes with ranges (e.g. learning_rate=1e-5:1e-4:log). Received: "
                    f"trials={trials!r}"
                )
            self.grid_trials = [
                (point, restart) for point in self.space.points() for restart in range(restarts)
            ]
            self.total_trials = len(self.grid_trials)

    def trial_config(self, point, restart=0):
        """The `FineTuningConfig` of the trial at `point` (a dict of settings), `restart`."""
        return self.config.replace(**point, seed=self.config.seed + restart)

    def trial_folder(self, index):
        return self.output_dir / TRIALS_FOLDER / f"trial-{index:03d}"

    @property
    def journal(self):
        """The Optuna journal file of the search."""
        return self.output_dir / JOURNAL_FILE

    @property
    def preset_path(self):
        return self.output_dir / MODEL_FOLDER

    def run(self, train, evaluation):
        """Runs the trials no process has run or is running; returns a `SearchResult`.

        Args:
            train: the training examples, or a file the task reads.
            evaluation: the dev examples or file that rank the trials (required).
        """
        if evaluation is None:
            raise ValueError("A search needs evaluation data: the dev set ranks the trials.")
        optuna = require_extra("optuna", "A fine-tuning search")
        self.output_dir.mkdir(parents=True, exist_ok=True)
        study = self._study(optuna)
        trials_run = 0
        while True:
            claim = self._claim(optuna, study)
            if claim is None:
                break
            trial, index, lock = claim
            try:
                status = self._run_trial(optuna, study, trial, index, train, evaluation)
            finally:
                lock.release()
            trials_run += 1
            if status == CANCELLED:
                return self._finish(optuna, study, trials_run, cancelled=True)
        return self._finish(optuna, study, trials_run)

    # --- The study -----------------------------------------------------------------------

    def _settings(self):
        """What every process sharing the search must agree on (as JSON stores it)."""
        settings = {
            "task": self.task.options(),
            "preset": str(self.preset),
            "space": self.space.to_dict(),
            "restarts": self.restarts,
            "trials": self.total_trials,
            "config": self.config.to_dict(),
        }
        return json.loads(json.dumps(settings))

    def _study(self, optuna):
        storage = optuna.storages.journal.JournalStorage(search_journal_backend(self.journal))
        with self._claim_lock(optuna):
            study = optuna.create_study(
                study_name=STUDY_NAME, storage=storage, direction="maximize", load_if_exists=True
            )
            settings = study.user_attrs.get("settings")
            if settings is None:
                study.set_user_attr("settings", self._settings())
            elif settings != self._settings():
                from kbert.training.run_state import describe_differences

                raise ValueError(
                    f"{str(self.output_dir)!r} holds another search "
                    f"({describe_differences(settings, self._settings())}). Run it with its "
                    "own settings, or choose another output folder."
                )
        return study

    def _claim_lock(self, optuna):
        return claim_lock(optuna, self.output_dir / CLAIM_LOCK_FILE)

    def _claim(self, optuna, study):
        """`(trial, index, lock)` of the next trial for this process; None when there is
        none left for it (`kbert.finetuning.search_claims.claim_trial`)."""
        with self._claim_lock(optuna):
            return claim_trial(optuna, study, self)

    # --- One trial -----------------------------------------------------------------------

    def _run_trial(self, optuna, study, trial, index, train, evaluation):
        """Fine-tunes trial `index` (resuming its checkpoint if it has one); its status."""
        point, restart = trial.user_attrs["point"], trial.params.get("restart", 0)
        config = self.trial_config(point, restart)
        logger.info(
            "Trial %d of %d: %s, seed %d.", index + 1, self.total_trials, point, config.seed
        )
        tuner = FineTuner(
            self.task, self.preset, self.trial_folder(index), config, self.callbacks,
            self.cancellation,
        )
        started = time.perf_counter()
        try:
            result = tuner.run(train, evaluation, resume=True)
        except BaseException:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            raise
        if result.status == CANCELLED or result.best_metric is None:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            return result.status
        row = trial_row(
            index, point, restart, config, result, time.perf_counter() - started,
            relative_folder(self.trial_folder(index), self.output_dir),
        )
        trial.set_user_attr("row", row)
        study.tell(trial, result.best_metric)
        for callback in self.callbacks:
            if hasattr(callback, "on_trial_end"):
                callback.on_trial_end(row)
        return result.status

    # --- The end -------------------------------------------------------------------------

    def _finish(self, optuna, study, trials_run, cancelled=False):
        """Writes the table (and the best model once every trial is done); the result."""
        with self._claim_lock(optuna):
            completed = study.get_trials(
                deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)
            )
            metric = self.task.metric
            rows = {}
            for trial in completed:
                index = checked_index(trial, self.total_trials, self.journal)
                rows[index] = checked_row(
                    trial.user_attrs.get("row"), index, metric,
                    relative_folder(self.trial_folder(index), self.output_dir), self.journal,
                )
            rows = [rows[index] for index in sorted(rows)]
            best = best_row(rows, metric)
            done = len(rows) == self.total_trials
            if done:
                self._keep_best(best)
            paths = self.output_dir / TABLE_CSV, self.output_dir / TABLE_JSON
            write_search_table(*paths, rows, metric, self)
        status = SEARCH_CANCELLED if cancelled else SEARCH_COMPLETED if done else SEARCH_INCOMPLETE
        return SearchResult(
            status=status,
            metric=metric,
            trials=rows,
            best=best,
            preset_path=self.preset_path if done else None,
            table_paths=paths,
            total_trials=self.total_trials,
            trials_run=trials_run,
        )

    def _keep_best(self, best):
        # The trial's folder by its index (never a path the journal names), every file
        # read through the bounded reader: a link in it leads nowhere outside.
        folder = self.trial_folder(best["trial"])
        with staged_folder(self.preset_path) as staging:
            copy_folder_checked(folder / MODEL_FOLDER, staging, folder)
        metric = self.task.metric
        logger.info(
            "Best trial: %d (%s %s), kept as %s.", best["trial"], metric, best[metric],
            self.preset_path,
        )
