"""BERT fine-tuning's defaults for `compile`: AdamW, the task's loss and metrics."""

import keras

from kbert.training.bert_adamw import BertAdamW


class CompileDefaults:
    """`compile` of a `BertTask` with "auto" arguments that fill in the task's defaults.

    A mixin of `BertTask`, before `keras.Model` among its bases. Tasks override
    `default_loss`, `default_metrics` and `default_weighted_metrics`; Keras' loading
    compiles a saved model again through `compile_from_config`.
    """

    def default_loss(self):
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def default_metrics(self):
        return [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]

    def default_weighted_metrics(self):
        """Metrics that must honour `sample_weight` (Keras gives it to no others)."""
        return None

    def compile(
        self,
        optimizer="auto",
        loss="auto",
        metrics="auto",
        weighted_metrics="auto",
        **kwargs,
    ):
        """`keras.Model.compile` with BERT fine-tuning defaults for "auto" arguments.

        "auto" means AdamW (learning rate 5e-5, weight decay 0.01 except on LayerNorm
        parameters and biases, epsilon 1e-6: `BertAdamW`), the task's cross-entropy on
        logits and its accuracy metric (weighted by `sample_weight` where the task's
        targets have padding, as the masked-LM's do).
        """
        if optimizer == "auto":
            optimizer = BertAdamW()
        if loss == "auto":
            loss = self.default_loss()
        if metrics == "auto":
            metrics = self.default_metrics()
        if weighted_metrics == "auto":
            weighted_metrics = self.default_weighted_metrics()
        super().compile(
            optimizer=optimizer,
            loss=loss,
            metrics=metrics,
            weighted_metrics=weighted_metrics,
            **kwargs,
        )

    def compile_from_config(self, config):
        """Keras loading: compiles as the saved model was compiled (Keras skips models
        that override `compile`)."""
        self.compile(**keras.saving.deserialize_keras_object(config))
        if self.built and getattr(self, "optimizer", None) is not None:
            self.optimizer.build(self.trainable_variables)
