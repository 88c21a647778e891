"""Continued pretraining on plain text: adapting a model to a domain before fine-tuning."""

import logging
import math
import pathlib

from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.pretraining.pretraining_config import PretrainingConfig
from kbert.pretraining.pretraining_data import create_pretraining_data
from kbert.pretraining.pretraining_loop import CHECKPOINT_FILE
from kbert.pretraining.pretraining_loop import PretrainingLoop
from kbert.pretraining.pretraining_result import CANCELLED
from kbert.pretraining.pretraining_result import PretrainingResult
from kbert.pretraining.shard_reader import ShardReader
from kbert.training.run_state import check_new_run_folder

logger = logging.getLogger("kbert.pretraining")

# Inside the output folder: the instances made from the text files.
DATA_FOLDER = "pretraining-data"
# Instances are at most this long (tokens) unless `max_length` says otherwise.
DEFAULT_LENGTH = 128
# The fine-tuning settings a continued pretraining run takes, and their defaults.
DEFAULTS = dict(
    epochs=1,
    batch_size=DEFAULT_BATCH_SIZE,
    learning_rate=1e-4,
    warmup_ratio=0.1,
    weight_decay=0.01,
    clip_norm=1.0,
    gradient_accumulation_steps=1,
    precision="auto",
    max_length=None,
    checkpoint_every=None,
    eval_batch_size=64,
    seed=0,
    data_parallel=False,
    adam_epsilon_style="keras",
)
# Fine-tuning settings without a meaning here (no per-epoch evaluation to stop on, no
# classification windows).
IGNORED = ("patience", "long_texts")


class _Cancelled(Exception):
    """Raised inside data preparation when the run is cancelled."""


class ContinuedPretraining:
    """Continues BERT's pretraining (masked-LM and next sentence) of a model on text files.

    The task "masked-lm" of `kbert finetune` and of the app: the text is split into
    documents (blank lines) and sentences, made into pretraining instances once
    (`create_pretraining_data`, kept in `output_dir/pretraining-data` and reused on
    resume), and trained with `PretrainingLoop` from the model, with dynamic masking.
    The settings are fine-tuning's: `epochs` passes over the instances, `warmup_ratio`
    of the steps, `max_length` the instance length.

    Args:
        source: the model to continue (any source `kbert.presets.resolve_preset` takes).
        output_dir: the run folder (the model is saved in `output_dir/model`).
        settings: a dict of `DEFAULTS`' keys (a `FineTuningConfig.to_dict()` works).
        callbacks: `TrainingCallback`s.
        cancellation: an object with `is_set()`, checked while the data is made and
            after every batch.

    Example:

    >>> run = ContinuedPretraining("demo", "runs/legal", {"epochs": 2})
    >>> result = run.run("legal-corpus.txt")
    """

    def __init__(self, source, output_dir, settings=None, callbacks=(), cancellation=None):
        settings = dict(settings or {})
        unknown = sorted(set(settings) - set(DEFAULTS) - set(IGNORED))
        if unknown:
            raise ValueError(
                f"Continued pretraining takes the settings {sorted(DEFAULTS)}. Received: {unknown}"
            )
        if settings.get("adam_epsilon_style", "keras") != "keras":
            raise ValueError(
                "Continued pretraining (masked-lm) uses Keras' AdamW epsilon; "
                "`adam_epsilon_style='torch'` is for fine-tuning."
            )
        self.source = source
        self.output_dir = pathlib.Path(output_dir).expanduser()
        self.settings = {
            key: default if settings.get(key) is None else settings[key]
            for key, default in DEFAULTS.items()
        }
        self.callbacks = list(callbacks)
        self.cancellation = cancellation

    def run(self, train_path, evaluation_path=None, resume=False):
        """Makes the instances (once) and pretrains; returns a `PretrainingResult`."""
        from kbert.presets import resolve_preset
        from kbert.tokenizer import BertTokenizer

        if not resume:
            check_new_run_folder(self.output_dir)
        preset = resolve_preset(self.source)
        tokenizer = BertTokenizer.from_preset(preset)
        sequence_length = self._sequence_length(preset, tokenizer)
        data = self.output_dir / DATA_FOLDER
        shards = self._instances(train_path, tokenizer, data / "train", sequence_length, resume)
        eval_shards = None
        if evaluation_path:
            eval_shards = self._instances(
                evaluation_path, tokenizer, data / "evaluation", sequence_length, resume
            )
        if shards is None or (evaluation_path and eval_shards is None):
            return self._cancelled()
        config = self._config(ShardReader(shards).num_instances)
        logger.info(
            "%s the pretraining of %s: %d instances of up to %d tokens, %d steps of %d.",
            "Resuming" if resume else "Continuing",
            self.source,
            ShardReader(shards).num_instances,
            sequence_length,
            config.steps,
            config.batch_size,
        )
        loop = PretrainingLoop(self.output_dir, config, self.callbacks, self.cancellation)
        # The run folder already holds the data, so a new run also goes through
        # `resume=True`: without a checkpoint it starts afresh.
        return loop.run(shards, init_from=preset, eval_data=eval_shards, resume=True)

    def _sequence_length(self, preset, tokenizer):
        from kbert.checkpoints.kbert_preset import read_preset_config

        max_positions = read_preset_config(preset)["backbone"].get("max_positions")
        limits = [tokenizer.max_length, self.settings["max_length"] or DEFAULT_LENGTH, max_positions]
        return min(limit for limit in limits if limit)

    def _config(self, instances):
        settings = self.settings
        batch_size = settings["batch_size"]
        if instances < batch_size:
            # As fine-tuning takes a training set smaller than a batch: one batch of all.
            logger.info(
                "The training data holds %d instances, fewer than batch_size=%d: batches "
                "of %d.", instances, batch_size, instances,
            )
            batch_size = instances
        accumulation = settings["gradient_accumulation_steps"]
        steps = max(1, math.ceil(settings["epochs"] * instances / (batch_size * accumulation)))
        return PretrainingConfig(
            batch_size=batch_size,
            steps=steps,
            learning_rate=settings["learning_rate"],
            warmup_steps=min(steps, round(settings["warmup_ratio"] * steps)),
            weight_decay=settings["weight_decay"],
            clip_norm=settings["clip_norm"],
            gradient_accumulation_steps=accumulation,
            precision=settings["precision"],
            checkpoint_every=settings["checkpoint_every"],
            dynamic_masking=True,
            eval_batch_size=settings["eval_batch_size"],
            data_parallel=settings["data_parallel"],
            seed=settings["seed"],
        )

    def _instances(self, text_path, tokenizer, folder, sequence_length, resume):
        """Instances made from `text_path` in `folder` (reused when resuming); None when
        cancelled meanwhile."""
        if resume and (folder / "manifest.json").is_file():
            return folder

        def progress(stage, count, total):
            if self.cancellation is not None and self.cancellation.is_set():
                raise _Cancelled()

        logger.info("Making pretraining data from %s…", text_path)
        try:
            create_pretraining_data(
                [text_path],
                tokenizer,
                folder,
                progress=progress,
                max_seq_length=sequence_length,
                dupe_factor=1,
                masking=False,
                seed=self.settings["seed"],
            )
        except _Cancelled:
            logger.info("Cancelled while making the pretraining data.")
            return None
        return folder

    def _cancelled(self):
        result = PretrainingResult(
            status=CANCELLED,
            global_step=0,
            train_metrics={},
            eval_metrics=None,
            preset_path=None,
            checkpoint_path=self.output_dir / CHECKPOINT_FILE,
        )
        for callback in self.callbacks:
            getattr(callback, "on_train_end", lambda result: None)(result)
        return result
