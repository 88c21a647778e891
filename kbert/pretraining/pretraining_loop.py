"""Pretraining shared by `kbert pretrain` and the GUI: plain `model.fit` underneath."""

import logging
import pathlib

from kbert.files.exclusive_output import exclusive_output
from kbert.training.distribution import data_parallel, process_share
from kbert.pretraining.pretraining_config import RESUMABLE_CHANGES, PretrainingConfig
from kbert.pretraining.pretraining_objective import (
    PretrainingObjective,
    pretraining_metrics,
)
from kbert.pretraining.pretraining_result import CANCELLED, COMPLETED, PretrainingResult
from kbert.pretraining.pretraining_parts import build_pretrainer
from kbert.pretraining.pretraining_parts import dynamic_masking
from kbert.pretraining.pretraining_parts import evaluation_batch_size
from kbert.pretraining.pretraining_parts import pretraining_optimizer
from kbert.pretraining.pretraining_parts import shard_readers
from kbert.pretraining.shard_dataset import ShardDataset
from kbert.training.optimization import precision_policy
from kbert.training.random_seed import set_random_seed
from kbert.training.run_state import CHECKPOINT_FILE
from kbert.training.run_state import MODEL_FOLDER
from kbert.training.run_state import model_source
from kbert.training.run_state import start_state
from kbert.training.step_callback import StepCallback
from kbert.training.training_checkpoint import TrainingCheckpoint

logger = logging.getLogger("kbert.pretraining")

# Settings that exist only for packed runs: an unpacked run's identity leaves them out,
# so checkpoints written before packing existed still resume.
_PACKING_SETTINGS = ("pack_sequences", "max_sequences_per_row")


class PretrainingLoop:
    """Pretrains a `BertPretrainer` on shards with masked-LM and next-sentence losses.

    `run` builds the model (a new one of a given `BertConfig`, or one continued from
    a preset for domain adaptation), wraps it in a `PretrainingObjective`, compiles
    it with AdamW or LAMB on a linear warm-up/decay schedule (weight decay skips
    LayerNorm parameters and biases; gradient accumulation and mixed precision are
    the optimiser's and the dtype policy's) and calls `model.fit` once on a
    `ShardDataset`, a `keras.utils.PyDataset` over the shards. At the end it saves
    the model with its tokenizer as a preset folder, `output_dir/model`, and scores
    it on the evaluation shards, if any.

    Packing (`config.pack_sequences`): the training shards are read through a
    `PackedShardReader`, several instances per row, with block-diagonal attention and
    one next-sentence prediction per instance; the fill factor before and after
    packing is logged when the run starts. The evaluation shards are read unpacked.

    Interruptions: every `config.checkpoint_every` batches, at the end and on
    cancellation, `output_dir/training_checkpoint.h5` receives the weights, the
    optimiser state, the random state of dynamic masking and the number of batches
    done. `run(..., resume=True)` restores it and continues with the batch after,
    reaching the same weights as an uninterrupted run.

    Progress: `callbacks` are objects with any of `on_train_begin(total_batches)`,
    `on_step(step, logs)` (after every batch: `step` counted from 1 over the whole
    run, `logs` Keras' running means since the run started (a resumed run continues
    the interrupted one's), with the names of
    `pretraining_metrics`) and `on_train_end(result)`. They run on the training
    thread. `cancellation` (a `threading.Event` or `kbert.finetuning.CancellationToken`)
    is checked after every batch: when set, the run writes a checkpoint and returns
    a result with status "cancelled".

    Args:
        output_dir: folder for the preset and the checkpoint; empty for a new run.
        config: a `PretrainingConfig`; None for the defaults.
        callbacks: progress listeners, as above.
        cancellation: an object with `is_set()`.

    Example:

    >>> loop = PretrainingLoop("runs/tiny", PretrainingConfig(steps=10000))
    >>> result = loop.run("shards/", backbone_config=BertConfig.from_size("tiny",
    ...                   vocabulary_size=tokenizer.vocabulary_size), tokenizer=tokenizer)
    >>> result.eval_metrics, result.preset_path
    """

    def __init__(self, output_dir, config=None, callbacks=(), cancellation=None):
        self.output_dir = pathlib.Path(output_dir).expanduser()
        self.config = config if config is not None else PretrainingConfig()
        if not isinstance(self.config, PretrainingConfig):
            raise ValueError(
                f"`config` must be a PretrainingConfig. Received: {type(self.config).__name__}"
            )
        self.callbacks = list(callbacks)
        self.cancellation = cancellation
        self.model = None
        self._checkpoint = None

    @property
    def preset_path(self):
        return self.output_dir / MODEL_FOLDER

    @property
    def checkpoint(self):
        # One object for the run: `restore` keeps the metric values `restore_metrics`
        # puts back later.
        if self._checkpoint is None:
            self._checkpoint = TrainingCheckpoint(self.output_dir / CHECKPOINT_FILE)
        return self._checkpoint

    @exclusive_output
    def run(
        self,
        train_data,
        *,
        init_from=None,
        backbone_config=None,
        tokenizer=None,
        eval_data=None,
        resume=False,
        overwrite=False,
    ):
        """Pretrains; returns a `PretrainingResult`.

        Args:
            train_data: a shard folder (or `ShardReader`).
            init_from: a preset (folder or name) to continue pretraining from.
            backbone_config: the `BertConfig` of a new model (instead of `init_from`).
            tokenizer: the `BertTokenizer` of a new model; with `init_from`, None for
                the preset's own.
            eval_data: a shard folder (or `ShardReader`) to score the final model on.
            resume: continue the run whose checkpoint is in `output_dir`; with more
                `steps` than it had, a finished run goes on.
            overwrite: start afresh in an `output_dir` that holds a run, deleting it.
        """
        config = self.config
        reader, eval_reader = shard_readers(train_data, eval_data, config)
        if (init_from is None) == (backbone_config is None):
            raise ValueError(
                "Give exactly one of `init_from` (a preset) and `backbone_config`."
            )
        if backbone_config is not None and tokenizer is None:
            raise ValueError("A new model (`backbone_config`) needs its `tokenizer`.")
        if not reader.masked and not config.dynamic_masking:
            raise ValueError(
                f"{reader.folder} holds unmasked instances (made with --dynamic-masking): "
                "train with dynamic masking."
            )
        if reader.masked and config.dynamic_masking:
            logger.warning(
                "%s holds masked instances: their stored masks are used, and dynamic "
                "masking only masks unmasked rows. For new masks at every pass, make the "
                "data with `kbert create-pretraining-data --dynamic-masking`.",
                reader.folder,
            )
        state = self._start_state(reader, init_from, backbone_config, resume, overwrite)

        set_random_seed(config.seed)
        with (
            data_parallel(config.data_parallel) as replicas,
            precision_policy(config.precision),
        ):
            if config.batch_size % replicas:
                raise ValueError(
                    f"`batch_size` must be a multiple of the {replicas} data-parallel "
                    f"replicas. Received: batch_size={config.batch_size}"
                )
            eval_batch_size = evaluation_batch_size(config, eval_reader, replicas)
            pretrainer, tokenizer = build_pretrainer(
                init_from, backbone_config, tokenizer
            )
            model = self._objective(pretrainer, tokenizer, (reader, eval_reader), state)
            self._notify("on_train_begin", config.total_batches)
            result = self._train(model, reader, state)
            if result.status == COMPLETED:
                if eval_reader is not None:
                    result.eval_metrics = model.score(eval_reader, eval_batch_size)
                self._save_model(pretrainer, tokenizer, reader, result)
        self._notify("on_train_end", result)
        return result

    def _objective(self, pretrainer, tokenizer, readers, state):
        """The compiled `PretrainingObjective` of `pretrainer`, restored when resuming."""
        for data in readers:
            if data is not None and tokenizer is not None:
                data.check_vocabulary(tokenizer)
        model = PretrainingObjective(pretrainer, dynamic_masking(self.config, tokenizer))
        model.compile_objective(pretraining_optimizer(self.config))
        self.model = model
        if state["global_step"] > 0:
            self.checkpoint.restore(model)
            logger.info("Resuming after batch %d.", state["global_step"])
        return model

    def _save_model(self, pretrainer, tokenizer, reader, result):
        config = self.config
        pretrainer.save_to_preset(
            self.preset_path,
            tokenizer=tokenizer,
            metadata={
                "pretraining": {
                    "steps": config.steps,
                    "batch_size": config.batch_size,
                    "train_data": str(reader.folder),
                    "eval": result.eval_metrics,
                }
            },
        )
        result.preset_path = self.preset_path
        logger.info("Saved the pretrained model to %s.", self.preset_path)

    def _train(self, model, reader, state):
        config = self.config
        remaining = config.total_batches - state["global_step"]
        dataset = ShardDataset(
            reader,
            config.batch_size,
            remaining,
            start=state["global_step"],
            seed=config.seed,
            share=process_share(),
        )
        # A resumed run continues the running losses and accuracies of the checkpoint,
        # so its report is the uninterrupted run's; with nothing left to train, the
        # report is the one the checkpoint recorded.
        steps = StepCallback(
            state,
            self.checkpoint,
            config.checkpoint_every,
            config.seed,
            self.cancellation,
            report=lambda step, logs: self._notify("on_step", step, pretraining_metrics(logs)),
        )
        steps.resume_inside_epoch = state["global_step"] > 0
        logs = dict(state.get("running_logs", {}))
        if remaining > 0:
            # TensorFlow infers a PyDataset's signature from its first batches: fine
            # here, where every batch has the same shape.
            try:
                history = model.fit(
                    dataset, epochs=1, shuffle=False, verbose=0, callbacks=[steps]
                )
            finally:
                dataset.close()
            logs = {key: float(values[-1]) for key, values in history.history.items()}
        state["running_logs"] = logs
        self.checkpoint.save(model, state)
        return PretrainingResult(
            status=CANCELLED if steps.cancelled else COMPLETED,
            global_step=state["global_step"],
            train_metrics=pretraining_metrics(logs),
            eval_metrics=None,
            preset_path=None,
            checkpoint_path=self.checkpoint.path,
        )

    def _identity(self, reader, init_from, backbone_config):
        """What a resumed run must share with the run that wrote the checkpoint."""
        return {
            "train_data": str(reader.folder.resolve()),
            "init_from": None if init_from is None else model_source(init_from),
            "backbone_config": None
            if backbone_config is None
            else backbone_config.to_dict(),
            "config": {
                key: value
                for key, value in self.config.to_dict().items()
                if key not in RESUMABLE_CHANGES
                and (self.config.pack_sequences or key not in _PACKING_SETTINGS)
            },
        }

    def _start_state(self, reader, init_from, backbone_config, resume, overwrite):
        return start_state(
            self.checkpoint,
            self.output_dir,
            self._identity(reader, init_from, backbone_config),
            fresh=dict(global_step=0),
            resume=resume,
            growing=("steps",),
            overwrite=overwrite,
        )

    def _notify(self, method, *args):
        for callback in self.callbacks:
            function = getattr(callback, method, None)
            if function is not None:
                function(*args)
