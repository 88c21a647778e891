"""One fine-tuning (or continued pretraining) run, executed by a `Worker`.

Worker side: everything here runs on the training thread. Keras and kbert's training
code are imported when the job runs, not with this module.
"""

import gc
import logging
import math
import pathlib
import threading
import time

from kbert_gui.worker import describe_error

# Continued masked-LM pretraining; the other task names are `kbert.tasks.make_task`'s.
MASKED_LM = "masked-lm"
# Instances are at most this long (tokens) unless the form's max length says otherwise.
DEFAULT_PRETRAINING_LENGTH = 128
# Inside the output folder of a masked-LM run.
PRETRAINING_DATA_FOLDER = "pretraining-data"
# Whether `gc.freeze()` moved the session's long-lived objects out of the collector's
# scans (once per process; see `FineTuningJob.__call__`).
_COLLECTOR_FROZEN = False


class _Cancelled(Exception):
    """Raised inside data preparation when the user cancels."""


class FineTuningJob:
    """A run of `kbert.tasks.FineTuner` or `kbert.pretraining.PretrainingLoop` that
    reports its progress through a `Worker`.

    Call it with the worker (`context.run_training(job)` does): it builds the run,
    trains, and returns the `FineTuningResult` (or `PretrainingResult`). The job is
    its own progress listener: it implements `kbert.tasks.FineTuningCallback`'s
    methods (duck-typed, so that importing this module does not import Keras) and
    turns every call into `worker.report(event)`, which reaches the UI thread as the
    worker's `progress` signal. Events are dicts with a "kind":

    - "log": `message`, `level` (the job's own lines, and every `kbert` log record
      made on the training thread while the job runs);
    - "train_begin": `total_steps`, `time`;
    - "step": `step`, `epoch`, `loss`, `metric` (pretraining: the running MLM
      accuracy; else None), `time` (`time.perf_counter()` when the batch ended);
    - "epoch_end": `epoch`, `step`, `logs` (as `on_epoch_end` got them), `metric`
      (the task's metric name) and `value` (None without evaluation data);
    - "probe": `epoch` (None after pretraining), `probe` (the inputs), `result` (what
      the model's `classify`/`tag`/`answer`/`fill_mask` returned) or `error`;
    - "train_end": `result`.

    The probe is predicted at every epoch end with the model being trained
    (`FineTuner.model`), on the training thread, so the model is never used by two
    threads. Masked-LM pretraining has no epochs: its probe runs once, on the saved
    model.

    Args:
        task_name: "classification", "pair-classification", "token-classification",
            "qa" or "masked-lm".
        source: the model to start from (preset name or folder, or a checkpoint folder
            that `preset_folder` converts).
        output_dir: the run folder (the model is saved in `output_dir/model`).
        train_path: the training file.
        evaluation_path: the evaluation file, or None.
        columns: for classification, `make_task`'s column options (`text_column`,
            `pair_column`, `label_column`).
        settings: `FineTuningConfig` keyword arguments. For masked-LM pretraining they
            map onto a `PretrainingConfig`: `epochs` passes over the instances,
            `warmup_ratio` of the steps, `max_length` the instance length.
        probe: dict of probe inputs ("text", "pair", "question", "context"), or None.
        resume: continue the run whose checkpoint is in `output_dir`.
        preset_folder: a callable turning `source` into a kbert preset (the app's
            `ModelStore.preset_folder`); None uses `source` as is.
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
    ):
        self.task_name = task_name
        self.source = source
        self.output_dir = pathlib.Path(output_dir).expanduser()
        self.train_path = str(train_path)
        self.evaluation_path = None if not evaluation_path else str(evaluation_path)
        self.columns = dict(columns or {})
        self.settings = dict(settings or {})
        self.resume = resume
        self._preset_folder = preset_folder
        self._probe = dict(probe) if probe else None
        self._lock = threading.Lock()
        self._worker = None
        self._tuner = None
        self._metric = None
        self._step = 0
        self._collector_was_enabled = True

    def set_probe(self, probe):
        """Changes the probe inputs (from the UI thread); used at the next epoch end."""
        with self._lock:
            self._probe = dict(probe) if probe else None

    def probe(self):
        with self._lock:
            return None if self._probe is None else dict(self._probe)

    def __call__(self, worker):
        self._worker = worker
        # The garbage collector's full passes scan every object while holding the GIL;
        # over the heap of Keras and its backends (TensorFlow: millions of objects,
        # imported by the first run) one took 0.5-4 s: a frozen window. So it pauses
        # while the run imports and builds, and at the start of training everything
        # alive (long-lived modules) is frozen out of its scans (`_resume_collector`).
        self._collector_was_enabled = gc.isenabled()
        gc.disable()
        kbert_logger = logging.getLogger("kbert")
        handler = _ForwardingLogHandler(worker, threading.get_ident())
        previous_level = kbert_logger.level
        if kbert_logger.getEffectiveLevel() > logging.INFO:
            kbert_logger.setLevel(logging.INFO)
        kbert_logger.addHandler(handler)
        try:
            if self.task_name == MASKED_LM:
                return self._pretrain(worker)
            return self._fine_tune(worker)
        except _Cancelled:
            self._log("Cancelled while preparing the data.")
            return None
        finally:
            kbert_logger.removeHandler(handler)
            kbert_logger.setLevel(previous_level)
            self._tuner = None  # the model: freed with the run, not kept by the tab's job
            if self._collector_was_enabled:
                gc.enable()

    # --- Fine-tuning -----------------------------------------------------------------

    def _preset(self):
        return self._preset_folder(self.source) if self._preset_folder is not None else self.source

    def _fine_tune(self, worker):
        from kbert.tasks import FineTuner
        from kbert.tasks import FineTuningConfig
        from kbert.tasks import make_task

        config = FineTuningConfig(**self.settings)
        task = make_task(self.task_name, **self.columns)
        self._metric = task.metric
        preset = self._preset()
        self._log(
            f"{'Resuming' if self.resume else 'Fine-tuning'} {preset} for {self.task_name} in {self.output_dir}."
        )
        self._tuner = FineTuner(
            task,
            preset,
            self.output_dir,
            config,
            callbacks=[self],
            cancellation=worker.cancellation,
        )
        return self._tuner.run(self.train_path, self.evaluation_path, resume=self.resume)

    # --- Continued masked-LM pretraining ------------------------------------------------

    def _pretrain(self, worker):
        from kbert.pretraining import PretrainingConfig
        from kbert.pretraining import PretrainingLoop
        from kbert.pretraining import ShardReader
        from kbert.checkpoints.kbert_preset import read_preset_config
        from kbert.presets import resolve_preset
        from kbert.tokenizer import BertTokenizer

        settings = self.settings
        preset = self._preset()
        if not self.resume and self.output_dir.exists() and any(self.output_dir.iterdir()):
            raise ValueError(
                f"The output folder {str(self.output_dir)!r} is not empty. Resume the run it "
                "holds or choose an empty folder."
            )
        tokenizer = BertTokenizer.from_preset(preset)
        max_positions = read_preset_config(resolve_preset(preset))["backbone"].get("max_positions")
        limits = [tokenizer.max_length, settings.get("max_length") or DEFAULT_PRETRAINING_LENGTH]
        sequence_length = min(limit for limit in limits + [max_positions] if limit)
        data_folder = self.output_dir / PRETRAINING_DATA_FOLDER
        shards = self._shards(
            worker, self.train_path, tokenizer, data_folder / "train", sequence_length
        )
        eval_shards = None
        if self.evaluation_path:
            eval_shards = self._shards(
                worker, self.evaluation_path, tokenizer, data_folder / "evaluation", sequence_length
            )

        batch_size = settings.get("batch_size", 32)
        accumulation = settings.get("gradient_accumulation_steps", 1)
        instances = ShardReader(shards).num_instances
        steps = max(
            1, math.ceil(settings.get("epochs", 1) * instances / (batch_size * accumulation))
        )
        config = PretrainingConfig(
            batch_size=batch_size,
            steps=steps,
            learning_rate=settings.get("learning_rate", 1e-4),
            warmup_steps=min(steps, round(settings.get("warmup_ratio", 0.1) * steps)),
            weight_decay=settings.get("weight_decay", 0.01),
            clip_norm=settings.get("clip_norm", 1.0),
            gradient_accumulation_steps=accumulation,
            precision=settings.get("precision", "float32"),
            checkpoint_every=settings.get("checkpoint_every"),
            dynamic_masking=True,
            eval_batch_size=settings.get("eval_batch_size", 64),
            seed=settings.get("seed", 0),
        )
        self._metric = "mlm_accuracy"
        self._log(
            f"{'Resuming' if self.resume else 'Continuing'} the pretraining of {preset}: {instances} "
            f"instances of up to {sequence_length} tokens, {steps} steps of {batch_size}."
        )
        loop = PretrainingLoop(
            self.output_dir, config, callbacks=[self], cancellation=worker.cancellation
        )
        # The run folder already holds the data, so a new run also goes through
        # `resume=True`: without a checkpoint it starts afresh.
        result = loop.run(shards, init_from=preset, eval_data=eval_shards, resume=True)
        if result.preset_path is not None:
            self._report_probe(None, lambda: _masked_lm(result.preset_path))
        return result

    def _shards(self, worker, text_path, tokenizer, folder, sequence_length):
        """Pretraining data made from `text_path` in `folder` (reused when resuming)."""
        from kbert.pretraining import create_pretraining_data

        if self.resume and (folder / "manifest.json").is_file():
            return folder

        def progress(stage, count, total):
            if worker.is_cancelled():
                raise _Cancelled()

        self._log(f"Making pretraining data from {text_path}…")
        create_pretraining_data(
            [text_path],
            tokenizer,
            folder,
            progress=progress,
            max_seq_length=sequence_length,
            dupe_factor=1,
            masking=False,
            seed=self.settings.get("seed", 0),
        )
        return folder

    # --- The FineTuningCallback protocol (on the training thread) ----------------------

    def on_train_begin(self, total_steps):
        self._resume_collector()
        self._report("train_begin", total_steps=total_steps, time=time.perf_counter())

    def on_step(self, step, logs):
        self._step = step
        self._report(
            "step",
            step=step,
            epoch=logs.get("epoch"),
            loss=logs.get("loss"),
            metric=logs.get("mlm_accuracy"),
            time=time.perf_counter(),
        )

    def on_epoch_end(self, epoch, logs):
        self._report(
            "epoch_end",
            epoch=epoch,
            step=self._step,
            logs=dict(logs),
            metric=self._metric,
            value=logs.get(self._metric),
        )
        model = self._tuner.model if self._tuner is not None else None
        if model is not None:
            self._report_probe(epoch, lambda: model)

    def on_train_end(self, result):
        self._report("train_end", result=result)

    def _resume_collector(self):
        global _COLLECTOR_FROZEN
        if not _COLLECTOR_FROZEN:
            gc.freeze()
            _COLLECTOR_FROZEN = True
        if self._collector_was_enabled:
            gc.enable()

    # --- Reporting ---------------------------------------------------------------------

    def _report(self, kind, **values):
        self._worker.report({"kind": kind, **values})

    def _log(self, message, level="INFO"):
        self._report("log", message=message, level=level)

    def _report_probe(self, epoch, get_model):
        probe = self.probe()
        if not probe:
            return
        try:
            result = predict_probe(get_model(), self.task_name, probe)
        except Exception as error:  # a bad probe must not stop the training
            self._report(
                "probe", epoch=epoch, probe=probe, result=None, error=describe_error(error)
            )
        else:
            self._report("probe", epoch=epoch, probe=probe, result=result, error=None)


def predict_probe(model, task_name, probe):
    """The model's prediction for the probe, through the model's public method."""
    if task_name in ("classification", "pair-classification"):
        return model.classify(
            probe["text"], pairs=probe.get("pair") if task_name == "pair-classification" else None
        )
    if task_name == "token-classification":
        return model.tag(probe["text"])
    if task_name == "qa":
        return model.answer(probe["question"], probe["context"], top_k=3)
    if task_name == MASKED_LM:
        return model.fill_mask(probe["text"], top_k=5)
    raise ValueError(f"Unknown task {task_name!r}.")


def _masked_lm(preset_path):
    from kbert.models import BertMaskedLM

    return BertMaskedLM.from_preset(preset_path)


class _ForwardingLogHandler(logging.Handler):
    """Sends the log records of one thread to the UI as "log" events.

    Logging calls handlers on the thread that logs; `Worker.report` emits a Qt signal,
    which Qt queues to the UI thread, so this is safe from any thread. Records of other
    threads (the explorer predicting meanwhile) are left out of this run's log.
    """

    def __init__(self, worker, thread_id):
        super().__init__(logging.INFO)
        self._worker = worker
        self._thread_id = thread_id
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def emit(self, record):
        if record.thread != self._thread_id:
            return
        try:
            message = self.format(record)
        except Exception:
            self.handleError(record)
            return
        self._worker.report({"kind": "log", "message": message, "level": record.levelname})
