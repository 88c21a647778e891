import logging
import pathlib
import warnings

import keras
import numpy as np

from kbert.inference.embedding import embed
from kbert.inference.model_io import predict_dataset
from kbert.models.bert_backbone import BertBackbone
from kbert.models.inference_method import InferenceMethod
from kbert.models.input_validation import validate_inputs
from kbert.preprocessing.data_forms import table_kind
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.training.bert_adamw import BertAdamW

logger = logging.getLogger("kbert.models")


class BertTask(keras.Model):
    """Base of the task models: a `BertBackbone` plus a small head.

    Subclasses build a functional graph in `__init__` from `backbone.input` (plus any
    `extra_inputs`) and name their head layers in `head_layer_names`. This class adds
    what every task shares: input validation, the preprocessor that lets `fit`,
    `evaluate` and `predict` take raw strings, default `compile` arguments, the
    `get_config`/`from_config` round trip (a `.keras` file keeps the tokenizer) and
    preset loading/saving.

    A task loaded with `from_preset` carries the preset's tokenizer as `.tokenizer`
    (None when the preset has no vocabulary), a `.preprocessor` made from it, is
    compiled with `compile()`'s defaults, and lists in `.freshly_initialized_heads`
    the head layers the preset did not provide.

    Raw inputs (strings, per-example records, pandas DataFrames, Hugging Face
    datasets) go through `self.preprocessor` in `fit`, `evaluate` and `predict`, the
    labels inside a table or beside it as `y`; tokenized dicts, `BucketedDataset`s
    and other datasets go to Keras as they are. See each task's preprocessor for the
    forms it takes.
    """

    extra_inputs = ()
    head_layer_names = ()
    # The `kbert.preprocessing` class that turns raw inputs into this task's batches.
    preprocessor_class = None
    # The `kbert finetune --task` that trains this head, for messages; None for heads
    # that train without labels.
    fine_tuning_task = None
    # The backbone class `from_preset` builds.
    backbone_class = BertBackbone
    # `model.embed(...)` is `kbert.inference.embed(model, model.tokenizer, ...)`: the
    # backbone's hidden states as features, whatever the head.
    embed = InferenceMethod(embed)

    def _task_inputs(self, backbone):
        inputs = dict(backbone.input)
        for name in self.extra_inputs:
            inputs[name] = keras.Input(shape=(None,), dtype="int32", name=name)
        return inputs

    def _finish_init(self, backbone, inputs, outputs, preprocessor=None, **kwargs):
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        # Set after Model.__init__: PyTorch modules must exist before sub-modules are assigned.
        self.backbone = backbone
        self._preprocessor = preprocessor
        self._preprocessor_config = {}
        self.freshly_initialized_heads = []

    @property
    def bert_config(self):
        return self.backbone.bert_config

    # --- Preprocessing -----------------------------------------------------------------

    @property
    def preprocessor(self):
        """The `kbert.preprocessing` object that turns raw inputs into batches (or None)."""
        return self._preprocessor

    @preprocessor.setter
    def preprocessor(self, preprocessor):
        self._preprocessor = preprocessor

    @property
    def tokenizer(self):
        """The `BertTokenizer` of the preprocessor; None without one."""
        return None if self._preprocessor is None else self._preprocessor.tokenizer

    @tokenizer.setter
    def tokenizer(self, tokenizer):
        self._preprocessor = None if tokenizer is None else self.make_preprocessor(tokenizer)

    def make_preprocessor(self, tokenizer, **settings):
        """This task's preprocessor over `tokenizer`, for sequences the model takes."""
        settings.setdefault(
            "sequence_length", min(int(tokenizer.max_length), self.bert_config.max_positions)
        )
        return self.preprocessor_class(tokenizer, **self.preprocessor_arguments(), **settings)

    def preprocessor_arguments(self):
        """What the preprocessor needs from the model besides the tokenizer (labels...)."""
        return {}

    def _takes_raw(self, x):
        if self._preprocessor is None:
            return False
        # A plain list is never model tensors (those come as dicts): the preprocessor
        # refuses it in a sentence rather than Keras printing it whole.
        host_list = isinstance(x, list) and not any(isinstance(i, np.ndarray) for i in x)
        return host_list or self._preprocessor.accepts(x)

    def _raw_dataset(self, x, y=None, sample_weight=None, batch_size=None, **settings):
        return self._preprocessor.dataset(
            x, y, sample_weight, batch_size or DEFAULT_BATCH_SIZE, **settings
        )

    def _raw_validation(self, validation_data, batch_size):
        if self._preprocessor is not None and table_kind(validation_data) is not None:
            # Records, a DataFrame or a dataset with the labels inside.
            return self._raw_dataset(validation_data, batch_size=batch_size, inference=True)
        if not isinstance(validation_data, (tuple, list)) or not validation_data:
            return validation_data
        if not self._takes_raw(validation_data[0]):
            return validation_data
        x, y, weights = (list(validation_data) + [None, None])[:3]
        # Scored like `evaluate`: sorted by length, each batch at its own fine bucket.
        return self._raw_dataset(x, y, weights, batch_size, inference=True)

    def head_layers(self):
        return [self.get_layer(name) for name in self.head_layer_names]

    def __call__(self, inputs, *args, **kwargs):
        validate_inputs(inputs, self.backbone.bert_config, self.extra_inputs)
        return super().__call__(inputs, *args, **kwargs)

    def _validate_data(self, x):
        # Host data is checked up front; datasets and generators are the caller's business.
        if isinstance(x, (dict, np.ndarray)):
            validate_inputs(x, self.backbone.bert_config, self.extra_inputs)

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """`keras.Model.predict`; raw inputs: `kbert.inference.model_io.predict_dataset`."""
        if not self._takes_raw(x):
            self._validate_data(x)
            return super().predict(x, batch_size, verbose, steps, callbacks)
        if steps is not None or callbacks is not None:
            raise ValueError("`steps` and `callbacks` need tensors or a dataset, not raw inputs.")
        dataset = self._raw_dataset(x, batch_size=batch_size, predict=True)
        return predict_dataset(self, dataset)

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 *args, **kwargs):
        """`keras.Model.evaluate`; raw strings (and label strings) are preprocessed."""
        if self._takes_raw(x):
            x = self._raw_dataset(x, y, sample_weight, batch_size, inference=True)
            y = sample_weight = batch_size = None
        self._validate_data(x)
        return super().evaluate(x, y, batch_size, verbose, sample_weight, *args, **kwargs)

    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        verbose="auto",
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        shuffle=True,
        class_weight=None,
        sample_weight=None,
        **kwargs,
    ):
        """`keras.Model.fit`; raw strings (and label strings) are preprocessed.

        With raw inputs, batches are padded to length buckets and shuffled within them
        (with NumPy's global generator, seeded by `keras.utils.set_random_seed`);
        `validation_split` holds out the last examples as Keras does, `validation_data`
        may be raw too, and `class_weight` becomes per-example weights.

        Example:

        >>> model = BertClassifier.from_preset("demo", label_names=["neg", "pos"])
        >>> model.fit(["a dull film", "a good film"], ["neg", "pos"], epochs=2)
        """
        if self._takes_raw(x):
            validation_batch_size = kwargs.get("validation_batch_size") or batch_size
            if validation_split:
                (x, y), validation_data = self._preprocessor.split(x, y, validation_split)
                validation_split = 0.0
            if class_weight is not None:
                sample_weight = self._class_weights(x, y, class_weight, sample_weight)
                class_weight = None
            x = self._raw_dataset(
                x,
                y,
                sample_weight,
                batch_size,
                shuffle=shuffle,
                seed=int(np.random.randint(0, 2**31 - 1)),
            )
            validation_data = self._raw_validation(validation_data, validation_batch_size)
            y = sample_weight = batch_size = None
            shuffle = False  # the dataset shuffles, reproducibly
        self._validate_data(x)
        with warnings.catch_warnings():
            # Heads that read `sequence_output` leave the pooler without gradients, as
            # Hugging Face's models without a pooler would; that is expected, not a bug.
            warnings.filterwarnings(
                "ignore", message=r"Gradients do not exist for variables \['pooler/"
            )
            history = super().fit(
                x,
                y,
                batch_size,
                epochs,
                verbose,
                callbacks,
                validation_split,
                validation_data,
                shuffle,
                class_weight,
                sample_weight,
                **kwargs,
            )
        if self.optimizer is not None and int(keras.ops.convert_to_numpy(self.optimizer.iterations)):
            self.freshly_initialized_heads = []  # trained now
        return history

    def _class_weights(self, x, y, class_weight, sample_weight):
        labels = self._preprocessor.task_features(x, y).labels
        if not isinstance(labels, np.ndarray) or labels.ndim != 1:
            raise ValueError(
                f"`class_weight` needs one class per example; {type(self).__name__} has "
                "other targets. Pass `sample_weight` instead."
            )
        weights = np.array([float(class_weight.get(int(label), 1.0)) for label in labels])
        if sample_weight is not None:
            weights = weights * np.asarray(sample_weight, dtype=np.float64).reshape(-1)
        return weights

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

    # --- Serialisation -----------------------------------------------------------------

    def task_config(self):
        """The constructor arguments of this task other than the backbone."""
        return {}

    def get_config(self):
        config = {
            "name": self.name,
            "trainable": self.trainable,
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            **self.task_config(),
        }
        if self._preprocessor is not None:
            # The tokenizer itself travels as assets of the `.keras` file (`save_assets`).
            config["preprocessor"] = self._preprocessor.get_config()
        if self.freshly_initialized_heads:
            config["freshly_initialized_heads"] = list(self.freshly_initialized_heads)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        backbone = config.pop("backbone")
        preprocessor_config = config.pop("preprocessor", None)
        untrained = config.pop("freshly_initialized_heads", [])
        if isinstance(backbone, dict):
            backbone = keras.saving.deserialize_keras_object(
                backbone, custom_objects={"BertBackbone": BertBackbone}
            )
        model = cls(backbone=backbone, **config)
        model._preprocessor_config = preprocessor_config or {}
        model.freshly_initialized_heads = list(untrained)
        return model

    def save_assets(self, dir_path):
        """Keras saving: writes the tokenizer's files (`vocab.txt`, its settings)."""
        if self.tokenizer is not None:
            self.tokenizer.save_to_preset(dir_path)

    def load_assets(self, dir_path):
        """Keras loading: the tokenizer (and preprocessor) back from `save_assets`' files."""
        from kbert.checkpoints.tokenizer_files import VOCABULARY_FILE
        from kbert.tokenizer.bert_tokenizer import BertTokenizer

        if (pathlib.Path(dir_path) / VOCABULARY_FILE).is_file():
            tokenizer = BertTokenizer.from_preset(pathlib.Path(dir_path))
            self._preprocessor = self.make_preprocessor(tokenizer, **self._preprocessor_config)

    # --- Presets -----------------------------------------------------------------------

    @classmethod
    def from_preset(cls, preset, dtype=None, load_weights=True, **kwargs):
        """Loads this task from any model source (see `kbert.presets.resolve_preset`).

        The backbone always comes from the preset. The head comes from it too when the
        preset holds weights for it (a `BertPretrainer` preset provides the masked-LM
        head of a `BertMaskedLM`, say); otherwise the head is freshly initialised, a
        warning names it, and it is listed in `.freshly_initialized_heads`. The model
        is an instance of `cls`, or of the class the preset was saved from when that is
        a subclass of `cls`: `BertTask.from_preset` returns whichever task the preset
        holds. It comes compiled with `compile()`'s defaults, ready for `fit`.

        Args:
            preset: a preset folder, a built-in or published name, a Hugging Face,
                Google or keras-hub folder, or an `hf://` / `kaggle://` handle.
            dtype: the dtype policy of the backbone ("float32", "bfloat16",
                "mixed_bfloat16", ...); None keeps Keras' global policy.
            load_weights: False builds the preset's architecture with freshly drawn
                weights (no weight file is applied).
            **kwargs: task arguments (e.g. `num_classes`); they override the preset's.

        Raises:
            ValueError: when the preset holds a task that is not a `cls` and `cls`
                cannot be built on its backbone (e.g. `BertTask` on a bare backbone).

        Examples:

        >>> model = BertClassifier.from_preset("bert-base-uncased", num_classes=2)
        >>> model = BertTask.from_preset("runs/sentiment/model")  # the task it holds
        """
        from kbert.models.preset_loading import load_task

        return load_task(cls, BertTask, preset, dtype=dtype, load_weights=load_weights, **kwargs)

    def save_to_preset(self, folder, tokenizer=None, metadata=None):
        """Writes backbone, head, task config and tokenizer as a preset folder.

        `tokenizer` defaults to the task's own `.tokenizer`.
        """
        from kbert.models.preset_saving import save_preset

        save_preset(
            self,
            folder,
            tokenizer=tokenizer if tokenizer is not None else self.tokenizer,
            metadata=metadata,
        )

    def to_checkpoint_data(self, tokenizer=None):
        """This task as plain data, for `kbert.checkpoints`' writers and exports.

        `tokenizer` defaults to the task's own `.tokenizer`.
        """
        from kbert.models.preset_saving import checkpoint_data

        return checkpoint_data(self, tokenizer if tokenizer is not None else self.tokenizer)

