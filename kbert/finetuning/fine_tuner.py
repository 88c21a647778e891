"""Fine-tuning shared by `kbert finetune` and the GUI: plain `model.fit` underneath."""

import logging
import math
import pathlib

import keras

from kbert.files.exclusive_output import exclusive_output
from kbert.preprocessing.bucketed_dataset import BucketedDataset
from kbert.preprocessing.data_parallel_rows import real_share
from kbert.preprocessing.length_buckets import length_buckets
from kbert.finetuning.best_epoch import fresh_state
from kbert.finetuning.best_epoch import record_epoch
from kbert.finetuning.fine_tuning_config import FineTuningConfig
from kbert.finetuning.fine_tuning_result import CANCELLED
from kbert.finetuning.fine_tuning_result import COMPLETED
from kbert.finetuning.fine_tuning_result import FineTuningResult
from kbert.finetuning.fine_tuning_result import STOPPED_EARLY
from kbert.finetuning.fine_tuning_recipe import FineTuningRecipe
from kbert.finetuning.fine_tuning_recipe import model_limits
from kbert.finetuning.recipe_registry import make_recipe
from kbert.finetuning.classification_recipe import with_long_texts
from kbert.finetuning.read_only_checkpoint import ReadOnlyCheckpoint
from kbert.finetuning.resume_identity import run_identity
from kbert.finetuning.resume_identity import training_data_fingerprint
from kbert.finetuning.run_data import read_run_data
from kbert.training.distribution import data_parallel
from kbert.training.distribution import process_share
from kbert.training.distribution import writes_outputs
from kbert.training.optimization import create_optimizer
from kbert.training.optimization import precision_policy
from kbert.training.random_seed import set_random_seed
from kbert.training.run_state import CHECKPOINT_FILE
from kbert.training.run_state import MODEL_FOLDER
from kbert.training.run_state import start_state
from kbert.training.step_callback import StepCallback
from kbert.training.training_checkpoint import TrainingCheckpoint

logger = logging.getLogger("kbert.finetuning")


class FineTuner:
    """Fine-tunes a task model from a preset on labelled examples.

    One call to `run` reads the data, builds the task model from the preset (a new
    head sized to the training labels), compiles it with `create_optimizer` and
    trains it with `model.fit`, one epoch per call, on a `BucketedDataset`. After
    every epoch it scores the model on the evaluation data with the task's metric,
    keeps the best model as a preset folder (`output_dir/model`, written
    atomically) and stops early when the score has not improved for `patience`
    epochs. Without evaluation data, `output_dir/model` holds the latest epoch.

    Interruptions: a training checkpoint (`output_dir/training_checkpoint.h5`:
    weights, dropout seed states, optimizer state, position in the data, best score
    and history) is written every `config.checkpoint_every` batches and after every
    epoch. `run(..., resume=True)` continues from it, skipping the batches the
    interrupted epoch had already trained on, and reaches the same weights as an
    uninterrupted run. On PyTorch, whose dropout draws from the global generator,
    the generator is re-seeded from `(seed, step)` before every batch instead.

    Several devices: with `config.data_parallel`, the model is replicated on every
    local device (`kbert.training.distribution.data_parallel`: `keras.distribution`
    on JAX, `tf.distribute.MirroredStrategy` over TensorFlow's GPUs) and every batch
    split between them; the run follows the one-device run with the same batches.
    Under several processes (`kbert.training.distribution.initialize_distributed`, then
    `data_parallel`), each process feeds its share of every batch, all of them evaluate,
    and the first one alone writes `output_dir` (model and checkpoint; it must be a
    folder every process reads, to resume).

    Cancellation: `cancellation` is a `CancellationToken` (or `threading.Event`)
    checked after every batch; when set, the run writes a checkpoint and returns a
    result with status "cancelled".

    `run` seeds Keras' global random state (`keras.utils.set_random_seed`) with
    `config.seed`, so that a new head starts the same on every run.

    Args:
        task: a `FineTuningRecipe` or a task name ("classification",
            "pair-classification", "token-classification", "qa").
        preset: the preset (folder or name) to start from; it needs a vocabulary.
        output_dir: folder for the best model and the training checkpoint. A new run
            needs it empty or absent.
        config: a `FineTuningConfig`; None for the defaults.
        callbacks: `kbert.training.TrainingCallback`s (or objects with some of its methods).
        cancellation: an object with `is_set()`, checked after every batch.

    Example:

    >>> tuner = FineTuner("classification", "bert-tiny-uncased", "runs/sentiment",
    ...                   FineTuningConfig(epochs=3, patience=1))
    >>> result = tuner.run("train.csv", "dev.csv")
    >>> result.best_metric, result.preset_path
    """

    def __init__(self, task, preset, output_dir, config=None, callbacks=(), cancellation=None):
        self.task = make_recipe(task) if isinstance(task, str) else task
        if not isinstance(self.task, FineTuningRecipe):
            raise ValueError(
                f"`task` must be a task name or a FineTuningRecipe. Received: task={task!r}"
            )
        self.preset = preset
        self.output_dir = pathlib.Path(output_dir).expanduser()
        self.config = config if config is not None else FineTuningConfig()
        if not isinstance(self.config, FineTuningConfig):
            raise ValueError(
                f"`config` must be a FineTuningConfig. Received: {type(self.config).__name__}"
            )
        if self.config.long_texts == "windows":  # "truncate" keeps the task's own setting
            self.task = with_long_texts(self.task, "windows")
        self.callbacks = list(callbacks)
        self.cancellation = cancellation
        self.checkpoint = TrainingCheckpoint(self.output_dir / CHECKPOINT_FILE)
        # The model of the latest `run`, for callers that want it in memory.
        self.model = None

    @property
    def preset_path(self):
        return self.output_dir / MODEL_FOLDER

    def run(self, train, evaluation=None, resume=False, overwrite=False):
        """Fine-tunes; returns a `FineTuningResult`.

        Args:
            train: a file the task reads, its example records, or a table as `fit` takes.
            evaluation: evaluation data in the same forms; None for none.
            resume: continue the run whose checkpoint is in `output_dir` (a fresh
                run starts when there is none); with more `epochs` than it had, a
                finished run goes on.
            overwrite: start afresh in an `output_dir` that holds a run, deleting it.
        """
        if writes_outputs():
            return self._locked_run(train, evaluation, resume, overwrite)
        # The other processes of a multi-process run hold the same replicated model and
        # write nothing: the first one writes the model and the checkpoint for all.
        if not isinstance(self.checkpoint, ReadOnlyCheckpoint):
            self.checkpoint = ReadOnlyCheckpoint(self.checkpoint)
        return self._run(train, evaluation, resume)

    @exclusive_output
    def _locked_run(self, train, evaluation, resume, overwrite):
        return self._run(train, evaluation, resume, overwrite)

    def _run(self, train, evaluation, resume, overwrite=False):
        train_examples, eval_examples, label_names = read_run_data(
            self.task, train, evaluation, self.config.patience
        )
        fingerprint = training_data_fingerprint(train_examples)
        state = self._start_state(label_names, fingerprint, resume, overwrite)
        # Everything the model touches is built, compiled and run inside the block.
        with data_parallel(self.config.data_parallel) as devices:
            _, processes = process_share()
            model, dataset, tokenizer, max_length = self._build_model(train_examples, label_names)
            steps_per_epoch = dataset.num_batches_per_epoch
            total_steps = steps_per_epoch * self.config.epochs
            self._compile(model, total_steps)
            if state["global_step"] > 0 or state["epoch"] > 0:
                self.checkpoint.restore(model)
                logger.info(
                    "Resuming at epoch %d, batch %d of %d (step %d).",
                    state["epoch"] + 1,
                    state["batch"],
                    steps_per_epoch,
                    state["global_step"],
                )
            state["steps_per_epoch"] = steps_per_epoch
            self._notify("on_train_begin", total_steps)
            status = self._train_epochs(model, dataset, tokenizer, max_length, state, eval_examples)
        result = self._result(state, status, devices, processes)
        self._notify("on_train_end", result)
        return result

    # --- Phases of a run -----------------------------------------------------------------

    def _build_model(self, train_examples, label_names):
        """`(model, dataset, tokenizer, max_length)`: the task model from the preset (seeded,
        in the run's precision) and its training batches."""
        config = self.config
        set_random_seed(config.seed)
        with precision_policy(config.precision):
            model = self.task.model_class.from_preset(
                self.preset, **self.task.model_arguments(label_names)
            )
        self.model = model
        tokenizer, max_length = model_limits(model, config.max_length)
        features = self.task.features(train_examples, tokenizer, label_names, max_length)
        dataset = BucketedDataset(
            features.token_ids,
            features.segment_ids,
            features.labels,
            batch_size=config.batch_size,
            buckets=length_buckets(max_length),
            seed=config.seed,
            pad_token_id=tokenizer.pad_token_id,
            full_batches=True,
        )
        return model, dataset, tokenizer, max_length

    def _compile(self, model, total_steps):
        config = self.config
        model.compile(
            optimizer=create_optimizer(
                max(total_steps // config.gradient_accumulation_steps, 1),
                learning_rate=config.learning_rate,
                warmup_ratio=config.warmup_ratio,
                weight_decay=config.weight_decay,
                gradient_accumulation_steps=config.gradient_accumulation_steps,
                clip_norm=config.clip_norm,
                epsilon_style=config.adam_epsilon_style,
            )
        )

    def _train_epochs(self, model, dataset, tokenizer, max_length, state, eval_examples):
        """Trains the epochs left, evaluating and checkpointing after each; the run's status."""
        config = self.config
        loop = StepCallback(
            state,
            self.checkpoint,
            config.checkpoint_every,
            config.seed,
            self.cancellation,
            report=lambda step, logs: self._notify(
                "on_step", step, {"epoch": state["epoch"] + 1, "loss": logs.get("loss")}
            ),
            counters=("global_step", "batch"),
        )
        if state.get("stopped_early"):
            return STOPPED_EARLY
        for epoch in range(state["epoch"], config.epochs):
            epoch_loss = self._fit_epoch(model, dataset, epoch, state, loop)
            if loop.cancelled:
                return CANCELLED
            logs = {"epoch": epoch + 1, "loss": epoch_loss}
            logs["learning_rate"] = float(keras.ops.convert_to_numpy(model.optimizer.learning_rate))
            if eval_examples is not None:
                logs.update(
                    self.task.evaluate(model, eval_examples, max_length, config.eval_batch_size)
                )
            self._end_epoch(model, tokenizer, state, logs, eval_examples is not None)
            self.checkpoint.save(model, state)
            self._notify("on_epoch_end", epoch + 1, logs)
            if state["stopped_early"]:
                return STOPPED_EARLY
            if loop.cancel_requested():
                return CANCELLED
        return COMPLETED

    def _fit_epoch(self, model, dataset, epoch, state, loop):
        """Trains the rest of `epoch` (all of it unless resumed inside it); its loss."""
        view = dataset.epoch_view(epoch, state["batch"])
        # Every batch of the epoch may be done already (a checkpoint on its last
        # batch): its loss is then the one the checkpoint recorded.
        epoch_loss = state.get("running_logs", {}).get("loss")
        if len(view):
            # Resuming inside this epoch: its running loss and metrics continue from
            # the checkpoint, so the epoch reports what an uninterrupted one would.
            loop.resume_inside_epoch = state["batch"] > 0
            # The logged loss weighs a batch by its real rows (the fillers of a full batch
            # and of data parallelism out).
            full = dataset.batch_size if dataset.full_batches else 0
            loop.real_rows = lambda i: real_share(len(view.example_indices(i)), view.replicas, full)
            data = view.as_tf_dataset() if _backend() == "tensorflow" else view
            history = model.fit(data, epochs=1, shuffle=False, verbose=0, callbacks=[loop])
            epoch_loss = float(history.history["loss"][-1])
        return epoch_loss

    # --- Run state -----------------------------------------------------------------------

    def _start_state(self, label_names, data_fingerprint, resume, overwrite=False):
        if isinstance(self.checkpoint, ReadOnlyCheckpoint):
            # The first process checks the folder; it may be writing there already.
            resume = True
        return start_state(
            self.checkpoint,
            self.output_dir,
            run_identity(self.task, self.preset, self.config, label_names, data_fingerprint),
            fresh=fresh_state(),
            resume=resume,
            growing=("epochs",),
            overwrite=overwrite,
        )

    def _end_epoch(self, model, tokenizer, state, logs, has_evaluation):
        """Records the epoch's logs; keeps the model if it is the best so far."""
        score = logs.get(self.task.metric) if has_evaluation else None
        if has_evaluation and score is None:
            raise ValueError(
                f"{type(self.task).__name__}.evaluate must return the task's metric "
                f"{self.task.metric!r}. Received: {sorted(logs)}"
            )
        if record_epoch(state, logs, score, self.config.patience):
            if not isinstance(self.checkpoint, ReadOnlyCheckpoint):
                # The task's name says what the model reads (single texts or pairs).
                record = {"task": self.task.name, "epoch": logs["epoch"], **_json_floats(logs)}
                model.save_to_preset(
                    self.preset_path, tokenizer=tokenizer, metadata={"fine_tuning": record}
                )
            logger.debug("Epoch %d: saved the model to %s.", logs["epoch"], self.preset_path)
        if state["stopped_early"]:
            logger.info(
                "No better %s for %d epochs: stopping early.", self.task.metric,
                self.config.patience,
            )

    def _result(self, state, status, devices, processes):
        history = state["history"]
        return FineTuningResult(
            status=status,
            metric=self.task.metric if state["best_metric"] is not None else None,
            best_metric=state["best_metric"],
            best_epoch=state["best_epoch"],
            final_metrics=dict(history[-1]) if history else {},
            preset_path=self.preset_path if state["best_epoch"] is not None else None,
            checkpoint_path=self.checkpoint.path,
            history=[dict(entry) for entry in history],
            global_step=state["global_step"],
            devices=devices,
            processes=processes,
        )

    def _notify(self, method, *args):
        for callback in self.callbacks:
            function = getattr(callback, method, None)
            if function is not None:
                function(*args)


def _backend():
    return keras.backend.backend()


def _json_floats(logs):
    return {
        key: value
        for key, value in logs.items()
        if isinstance(value, (int, float)) and math.isfinite(value)
    }
