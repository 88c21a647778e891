import logging
import warnings

import keras
import numpy as np

from kbert.models.bert_backbone import BertBackbone
from kbert.models.input_validation import validate_inputs

logger = logging.getLogger("kbert.models")


class BertTask(keras.Model):
    """Base of the task models: a `BertBackbone` plus a small head.

    Subclasses build a functional graph in `__init__` from `backbone.input` (plus any
    `extra_inputs`) and name their head layers in `head_layer_names`. This class adds
    what every task shares: input validation, default `compile` arguments, the
    `get_config`/`from_config` round trip and preset loading/saving.

    A task loaded with `from_preset` carries the preset's tokenizer as `.tokenizer`
    (None when the preset has no vocabulary) and lists in `.freshly_initialized_heads`
    the head layers the preset did not provide.
    """

    extra_inputs = ()
    head_layer_names = ()

    def _task_inputs(self, backbone):
        inputs = dict(backbone.input)
        for name in self.extra_inputs:
            inputs[name] = keras.Input(shape=(None,), dtype="int32", name=name)
        return inputs

    def _finish_init(self, backbone, inputs, outputs, **kwargs):
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        # Set after Model.__init__: PyTorch modules must exist before sub-modules are assigned.
        self.backbone = backbone
        self.tokenizer = None
        self.freshly_initialized_heads = []

    @property
    def bert_config(self):
        return self.backbone.bert_config

    def head_layers(self):
        return [self.get_layer(name) for name in self.head_layer_names]

    def __call__(self, inputs, *args, **kwargs):
        validate_inputs(inputs, self.backbone.bert_config, self.extra_inputs)
        return super().__call__(inputs, *args, **kwargs)

    def _validate_data(self, x):
        # Host data is checked up front; datasets and generators are the caller's business.
        if isinstance(x, (dict, np.ndarray)):
            validate_inputs(x, self.backbone.bert_config, self.extra_inputs)

    def predict(self, x, *args, **kwargs):
        self._validate_data(x)
        return super().predict(x, *args, **kwargs)

    def evaluate(self, x=None, *args, **kwargs):
        self._validate_data(x)
        return super().evaluate(x, *args, **kwargs)

    def fit(self, x=None, *args, **kwargs):
        self._validate_data(x)
        with warnings.catch_warnings():
            # Heads that read `sequence_output` leave the pooler without gradients, as
            # Hugging Face's models without a pooler would; that is expected, not a bug.
            warnings.filterwarnings(
                "ignore", message=r"Gradients do not exist for variables \['pooler/"
            )
            return super().fit(x, *args, **kwargs)

    # --- Training defaults -------------------------------------------------------------

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

        "auto" means AdamW (learning rate 5e-5, weight decay 0.01), the task's
        cross-entropy on logits and its accuracy metric (weighted by `sample_weight`
        where the task's targets have padding, as the masked-LM's do).
        """
        if optimizer == "auto":
            optimizer = keras.optimizers.AdamW(learning_rate=5e-5, weight_decay=0.01)
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

    # --- Serialisation -----------------------------------------------------------------

    def task_config(self):
        """The constructor arguments of this task other than the backbone."""
        return {}

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            **self.task_config(),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        backbone = config.pop("backbone")
        if isinstance(backbone, dict):
            backbone = keras.saving.deserialize_keras_object(
                backbone, custom_objects={"BertBackbone": BertBackbone}
            )
        return cls(backbone=backbone, **config)

    # --- Presets -----------------------------------------------------------------------

    @classmethod
    def from_preset(cls, preset, **kwargs):
        """Loads this task from a preset folder or a registered preset name.

        The backbone always comes from the preset. The head comes from it too when the
        preset holds weights for it (a `BertPretrainer` preset provides the masked-LM
        head of a `BertMaskedLM`, say); otherwise the head is freshly initialised, a
        warning names it, and it is listed in `.freshly_initialized_heads`.

        Args:
            preset: folder path or registered preset name.
            **kwargs: task arguments (e.g. `num_classes`); they override the preset's.
        """
        from kbert.presets.preset_loader import load_task

        return load_task(cls, preset, **kwargs)

    def save_to_preset(self, folder, tokenizer=None, metadata=None):
        """Writes backbone, head, task config and tokenizer as a preset folder.

        `tokenizer` defaults to the task's own `.tokenizer`.
        """
        from kbert.presets.preset_writer import save_preset

        save_preset(
            self,
            folder,
            tokenizer=tokenizer if tokenizer is not None else self.tokenizer,
            metadata=metadata,
        )
