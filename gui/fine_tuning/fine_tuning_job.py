"""One fine-tuning (or continued pretraining) run, executed by a `Worker`.

Worker side: everything here runs on the training thread. Keras and kbert's training
code are imported when the job runs, not with this module.
"""

import logging
import pathlib
import threading

from kbert.training.progress_events import EpochFinished
from kbert.training.progress_events import ProgressEvents
from kbert_gui.fine_tuning.fine_tuning_events import LogLine
from kbert_gui.fine_tuning.fine_tuning_events import ProbePredicted
from kbert_gui.fine_tuning.fine_tuning_events import TrialFinished
from kbert_gui.services.thread_log_handler import ThreadLogHandler
from kbert_gui.services.worker import describe_error

# Continued masked-LM pretraining (`kbert.pretraining.ContinuedPretraining`); the other
# task names are `kbert.finetuning.make_recipe`'s.
MASKED_LM = "masked-lm"


class FineTuningJob:
    """A run of `kbert.finetuning.FineTuner` or `kbert.pretraining.PretrainingLoop` that
    reports its progress through a `Worker`.

    Call it with the worker (`context.run_training(job)` does): it builds the run,
    trains, and returns the `FineTuningResult` (or `PretrainingResult`). Every progress
    event reaches the UI thread through `worker.report(event)` (the worker's `progress`
    signal), typed: kbert's `TrainingStarted`, `StepFinished`, `EpochFinished` and
    `TrainingFinished` (`kbert.training.progress_events`), and the app's `LogLine` (the
    job's own lines, and every `kbert` log record of the training thread while the job
    runs) and `ProbePredicted` (`kbert_gui.fine_tuning.fine_tuning_events`).

    The probe is predicted at every epoch end with the model being trained
    (`FineTuner.model`), on the training thread, so the model is never used by two
    threads. Masked-LM pretraining has no epochs: its probe runs once, on the saved
    model.

    With `search`, the job is a `kbert.finetuning.FineTuningSearch` instead (it returns
    a `SearchResult`): every trial reports kbert's events as a single run does, and
    each finished trial a `TrialFinished`. Its trials' models stay inside the search,
    so the probe is not predicted.

    Args:
        task_name: "classification", "pair-classification", "token-classification",
            "qa", "multiple-choice" or "masked-lm".
        source: the model to start from (preset name or folder, or a checkpoint folder
            that `preset_folder` converts).
        output_dir: the run folder (the model is saved in `output_dir/model`).
        train_path: the training file.
        evaluation_path: the evaluation file, or None.
        columns: for classification, `make_recipe`'s column options (`text_column`,
            `pair_column`, `label_column`); for multiple choice, `context_column`,
            `start_column`, `label_column`.
        settings: `FineTuningConfig` keyword arguments. For masked-LM pretraining they
            map onto a `PretrainingConfig`: `epochs` passes over the instances,
            `warmup_ratio` of the steps, `max_length` the instance length.
        probe: dict of probe inputs ("text", "pair", "question", "context", "endings":
            a list), or None.
        resume: continue the run whose checkpoint is in `output_dir`.
        preset_folder: a callable turning `source` into a kbert preset (the app's
            `ModelStore.preset_folder`); None uses `source` as is.
        search: `{"space", "restarts", "trials"}` for a search (`SearchForm.search`),
            or None for a single run. A search resumes by itself (`resume` is unused).
    """

    def __init__(
        self,
        task_name,
        source,
        output_dir,
        train_path,
        evaluation_path=None,
        columns=None,
        settings=None,
        probe=None,
        resume=False,
        preset_folder=None,
        search=None,
    ):
        self.task_name = task_name
        self.source = source
        self.output_dir = pathlib.Path(output_dir).expanduser()
        self.train_path = str(train_path)
        self.evaluation_path = None if not evaluation_path else str(evaluation_path)
        self.columns = dict(columns or {})
        self.settings = dict(settings or {})
        self.resume = resume
        self.search = dict(search) if search else None
        self._preset_folder = preset_folder
        self._probe = dict(probe) if probe else None
        self._lock = threading.Lock()
        self._worker = None
        self._tuner = None

    def set_probe(self, probe):
        """Changes the probe inputs (from the UI thread); used at the next epoch end."""
        with self._lock:
            self._probe = dict(probe) if probe else None

    def probe(self):
        with self._lock:
            return None if self._probe is None else dict(self._probe)

    def __call__(self, worker):
        self._worker = worker
        with ThreadLogHandler.capture(worker.report, convert=_log_line):
            try:
                if self.task_name == MASKED_LM:
                    return self._pretrain(worker)
                return self._fine_tune(worker)
            finally:
                self._tuner = None  # the model: freed with the run, not kept by the tab's job

    # --- Fine-tuning -----------------------------------------------------------------

    def _preset(self):
        return self._preset_folder(self.source) if self._preset_folder is not None else self.source

    def _fine_tune(self, worker):
        from kbert.finetuning import FineTuner
        from kbert.finetuning import FineTuningConfig
        from kbert.finetuning import make_recipe

        config = FineTuningConfig(**self.settings)
        task = make_recipe(self.task_name, **self.columns)
        preset = self._preset()
        if self.search is not None:
            return self._search(worker, task, preset, config)
        self._log(
            f"{'Resuming' if self.resume else 'Fine-tuning'} {preset} for {self.task_name} in {self.output_dir}."
        )
        self._tuner = FineTuner(
            task,
            preset,
            self.output_dir,
            config,
            callbacks=[ProgressEvents(self._on_progress)],
            cancellation=worker.cancellation,
        )
        return self._tuner.run(self.train_path, self.evaluation_path, resume=self.resume)

    def _search(self, worker, task, preset, config):
        from kbert.finetuning import FineTuningSearch

        search = self.search
        self._log(
            f"Searching {search['space']} from {preset} for {self.task_name} in "
            f"{self.output_dir} (trials already finished there are kept)."
        )
        run = FineTuningSearch(
            task,
            preset,
            self.output_dir,
            search["space"],
            config,
            restarts=search["restarts"],
            callbacks=[_SearchEvents(self._on_progress)],
            cancellation=worker.cancellation,
            trials=search["trials"],
        )
        return run.run(self.train_path, self.evaluation_path)

    # --- Continued masked-LM pretraining ------------------------------------------------

    def _pretrain(self, worker):
        from kbert.pretraining import ContinuedPretraining

        preset = self._preset()
        self._log(f"{'Resuming' if self.resume else 'Continuing'} the pretraining of {preset}.")
        run = ContinuedPretraining(
            preset,
            self.output_dir,
            self.settings,
            callbacks=[ProgressEvents(self._on_progress)],
            cancellation=worker.cancellation,
        )
        result = run.run(self.train_path, self.evaluation_path, resume=self.resume)
        if result.cancelled and result.global_step == 0 and not result.checkpoint_path.is_file():
            self._log("Cancelled while preparing the data.")
            return None
        if result.preset_path is not None:
            self._report_probe(None, lambda: _masked_lm(result.preset_path))
        return result

    # --- Progress (on the training thread) --------------------------------------------

    def _on_progress(self, event):
        """Every kbert progress event of the run: on to the UI, and the probe per epoch."""
        self._worker.report(event)
        if isinstance(event, EpochFinished):
            model = self._tuner.model if self._tuner is not None else None
            if model is not None:
                self._report_probe(event.epoch, lambda: model)

    # --- Reporting ---------------------------------------------------------------------

    def _log(self, message, level="INFO"):
        self._worker.report(LogLine(message, level))

    def _report_probe(self, epoch, get_model):
        probe = self.probe()
        if not probe:
            return
        try:
            result = predict_probe(get_model(), self.task_name, probe)
        except Exception as error:  # a bad probe must not stop the training
            self._worker.report(ProbePredicted(epoch, probe, None, describe_error(error)))
        else:
            self._worker.report(ProbePredicted(epoch, probe, result, None))


def predict_probe(model, task_name, probe):
    """The model's prediction for the probe, through the model's public method."""
    from kbert.finetuning.task_specs import task_spec

    return task_spec(task_name).predict(model, probe)


def _masked_lm(preset_path):
    from kbert.models import BertMaskedLM

    return BertMaskedLM.from_preset(preset_path)


class _SearchEvents(ProgressEvents):
    """kbert's progress events of every trial, and a `TrialFinished` per finished trial."""

    def on_trial_end(self, row):
        self._sink(TrialFinished(dict(row)))


_LOG_FORMAT = logging.Formatter("%(name)s: %(message)s")


def _log_line(record):
    """A kbert log record of the run as the app's "log" event: "kbert.data: Read ..."."""
    return LogLine(_LOG_FORMAT.format(record), record.levelname)
