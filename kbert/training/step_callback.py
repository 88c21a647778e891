"""The per-batch work every kbert training loop shares, as one Keras callback."""

import logging

import keras
import numpy as np

logger = logging.getLogger("kbert.training")


class StepCallback(keras.callbacks.Callback):
    """Counts batches, reports them, writes checkpoints and honours cancellation.

    After every batch it advances the run state's counters, keeps Keras' running logs
    in `state["running_logs"]` (what a checkpoint records of the epoch in progress),
    calls `report(step, logs)`, and writes the training checkpoint every
    `checkpoint_every` batches, or at once, with `stop_training`, when `cancellation`
    is set. On PyTorch, whose dropout draws from the global generator (a checkpoint
    cannot restore its state), the generator is seeded from `(seed, step)` before
    every batch, so dropout is a function of the step, the same in a resumed run.

    Set `resume_inside_epoch` before a `fit` that continues an interrupted epoch: after
    its first batch the checkpoint's metric totals are added back
    (`TrainingCheckpoint.add_restored_metrics`), so the epoch reports what an
    uninterrupted one does.

    Set `real_rows` to `batch -> fraction` (the real rows' share of a batch of the next
    `fit`, `real_share`) where data parallelism fills batches up: Keras' running loss
    weighs each batch by its rows, fillers included; after such a batch its share is
    taken back out of the totals, so the logged loss weighs the batch by its real rows,
    as one device does.

    Args:
        state: the run's state dict (JSON-able; saved with every checkpoint).
        checkpoint: the run's `TrainingCheckpoint`.
        checkpoint_every: batches between checkpoints, or None.
        seed: the run's seed.
        cancellation: an object with `is_set()`, or None.
        report: `report(step, logs)`, called after every batch with Keras' logs.
        counters: the keys of `state` advanced by one after every batch.
    """

    def __init__(
        self,
        state,
        checkpoint,
        checkpoint_every,
        seed,
        cancellation,
        report,
        counters=("global_step",),
    ):
        super().__init__()
        self.state = state
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.seed = seed
        self.cancellation = cancellation
        self.report = report
        self.counters = tuple(counters)
        self.cancelled = False
        self.resume_inside_epoch = False
        self.real_rows = None
        self._loss_before = None

    def cancel_requested(self):
        return self.cancellation is not None and self.cancellation.is_set()

    def on_train_batch_begin(self, batch, logs=None):
        if keras.backend.backend() == "torch":
            import torch

            seed = np.random.SeedSequence([self.seed, self.state["global_step"]])
            torch.manual_seed(int(seed.generate_state(1, dtype=np.uint64)[0] >> 1))
        share = 1.0 if self.real_rows is None else self.real_rows(batch)
        self._loss_before = _loss_totals(self.model) + (share,) if share < 1 else None

    def on_train_batch_end(self, batch, logs=None):
        if self._loss_before is not None:
            # Only the real rows' part of what this batch added to the loss totals stays.
            *before, share = self._loss_before
            self._loss_before = None
            variables = _loss_tracker(self.model).variables
            for variable, old, new in zip(variables, before, _loss_totals(self.model)):
                variable.assign(old + (new - old) * share)
            logs = self.model.get_metrics_result()
        if self.resume_inside_epoch:
            self.resume_inside_epoch = False
            if self.checkpoint.add_restored_metrics(self.model):
                logs = self.model.get_metrics_result()
        state = self.state
        for counter in self.counters:
            state[counter] += 1
        state["running_logs"] = {key: float(value) for key, value in (logs or {}).items()}
        self.report(state["global_step"], state["running_logs"])
        if self.cancel_requested():
            self.cancelled = True
            self.model.stop_training = True
            self.checkpoint.save(self.model, state)
            logger.info("Cancelled at step %d; checkpoint written.", state["global_step"])
        elif self.checkpoint_every is not None and state["global_step"] % self.checkpoint_every == 0:
            self.checkpoint.save(self.model, state)


def _loss_tracker(model):
    """Keras' running mean of the training loss (`total` and `count` variables)."""
    return next(metric for metric in model.metrics if metric.name == "loss")


def _loss_totals(model):
    if hasattr(model, "jax_state_sync"):
        # During `fit`, JAX keeps the live values outside the variables; after the sync
        # the next step reads them back from the variables.
        model.jax_state_sync()
    return tuple(float(keras.ops.convert_to_numpy(v)) for v in _loss_tracker(model).variables)
