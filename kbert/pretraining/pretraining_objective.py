"""BERT's pretraining objective around a `BertPretrainer`, for `fit` and `evaluate`."""

import keras
from keras import ops

MODEL_INPUTS = (
    "token_ids", "segment_ids", "padding_mask", "mask_positions",
    # Packed rows only (`PackedShardReader`):
    "sequence_index", "cls_positions",
)


class PretrainingObjective(keras.Model):
    """A `BertPretrainer` that takes `ShardReader` batches and knows its own targets.

    `fit` and `evaluate` take the batches of `ShardReader.batches` as `x` (no `y`):
    the targets travel inside the batch, or, with `masking`, are made inside the
    compiled step by a `DynamicMasking` layer, so that every step sees new masks.
    Batches that carry masks (`mask_positions`) are scored with them even when
    `masking` is set.
    `call` returns the logits together with their targets, and `compute_loss` /
    `compute_metrics` hand them to the compiled losses and metrics as `y` and
    `sample_weight`.

    Loss: masked-LM cross-entropy averaged over the real predictions (`mask_weights`
    1; padded prediction slots do not count) plus the next-sentence cross-entropy
    averaged over the batch, as in the original `run_pretraining.py`. Logged as
    `loss`, `mlm_logits_loss`, `nsp_logits_loss`, `mlm_logits_accuracy` (weighted
    by `mask_weights`) and `nsp_logits_accuracy`.

    Packed batches (`PackedShardReader`'s: `sequence_index`, `cls_positions`, and
    `nsp_labels`, `nsp_weights` of shape (B, P)) give one next-sentence prediction per
    packed instance; both losses and accuracies are averaged over the real instances
    and predictions (weights 1), so a packed batch scores what the batch of its
    instances, unpacked, scores.

    Args:
        pretrainer: the `BertPretrainer` to train (its variables are this model's).
        masking: None, or a `DynamicMasking` layer applied to `token_ids`.
    """

    def __init__(self, pretrainer, masking=None, **kwargs):
        super().__init__(**kwargs)
        self.pretrainer = pretrainer
        self.masking = masking

    def call(self, batch, training=False):
        inputs = {name: batch[name] for name in MODEL_INPUTS if name in batch}
        targets = {name: batch.get(name) for name in ("mask_ids", "mask_weights")}
        # Only unmasked rows are masked here: rows with stored masks (held-out shards
        # scored at the end of a run with dynamic masking) keep theirs, or their
        # [MASK] tokens would be masked over again and the scores fall.
        if self.masking is not None and "mask_positions" not in batch:
            masked = self.masking(batch["token_ids"])
            inputs["token_ids"] = masked["token_ids"]
            inputs["mask_positions"] = masked["mask_positions"]
            targets = {
                "mask_ids": masked["mask_ids"],
                "mask_weights": masked["mask_weights"],
            }
        if "mask_positions" not in inputs:
            raise ValueError(
                "These batches hold no masks (data made with --dynamic-masking): train "
                "with dynamic masking."
            )
        outputs = self.pretrainer(inputs, training=training)
        nsp_weights = batch.get("nsp_weights")
        if nsp_weights is None:
            nsp_weights = ops.ones_like(batch["nsp_labels"], dtype="float32")
        return {
            **outputs,
            **targets,
            "nsp_labels": batch["nsp_labels"],
            "nsp_weights": nsp_weights,
        }

    def compile_objective(self, optimizer, **kwargs):
        """`compile` with the pretraining losses and metrics."""
        super().compile(
            optimizer=optimizer,
            loss={
                "mlm_logits": keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True, reduction="mean_with_sample_weight"
                ),
                # Over the real instances: packed rows have empty slots (weight 0).
                "nsp_logits": keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True, reduction="mean_with_sample_weight"
                ),
            },
            # Weighted: Keras passes `sample_weight` to `weighted_metrics` only, and
            # the masked-LM accuracy must leave out the padded prediction slots.
            weighted_metrics={
                "mlm_logits": [
                    keras.metrics.SparseCategoricalAccuracy(name="accuracy")
                ],
                "nsp_logits": [
                    keras.metrics.SparseCategoricalAccuracy(name="accuracy")
                ],
            },
            **kwargs,
        )

    def score(self, reader, batch_size):
        """Loss and accuracies on every full batch of `reader`'s shards, in stored order.

        Returns:
            The names of `pretraining_metrics`.
        """
        from kbert.training.distribution import process_share
        from kbert.pretraining.shard_dataset import ShardDataset

        dataset = ShardDataset(reader, batch_size, None, shuffle=False, share=process_share())
        try:
            logs = self.evaluate(dataset, verbose=0, return_dict=True)
        finally:
            dataset.close()
        return pretraining_metrics(logs)

    def compute_loss(
        self, x=None, y=None, y_pred=None, sample_weight=None, training=True
    ):
        return super().compute_loss(x, *_split(y_pred), training=training)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        return super().compute_metrics(x, *_split(y_pred))


def pretraining_metrics(logs):
    """Keras' log names (`mlm_logits_accuracy`, ...) as kbert reports them (`mlm_accuracy`)."""
    names = {
        "loss": "loss",
        "mlm_loss": "mlm_logits_loss",
        "mlm_accuracy": "mlm_logits_accuracy",
        "nsp_loss": "nsp_logits_loss",
        "nsp_accuracy": "nsp_logits_accuracy",
    }
    return {name: float(logs[key]) for name, key in names.items() if key in logs}


def _split(outputs):
    """(targets, logits, weights) keyed by the logits' names."""
    logits = {"mlm_logits": outputs["mlm_logits"], "nsp_logits": outputs["nsp_logits"]}
    targets = {"mlm_logits": outputs["mask_ids"], "nsp_logits": outputs["nsp_labels"]}
    weights = {
        "mlm_logits": outputs["mask_weights"],
        "nsp_logits": outputs["nsp_weights"],
    }
    return targets, logits, weights
