"""The base of the task models: a `BertBackbone`, a small head and the preprocessor."""

import keras

from kbert.inference.embedding import embed
from kbert.models.bert_backbone import BertBackbone
from kbert.models.compile_defaults import CompileDefaults
from kbert.models.inference_method import InferenceMethod
from kbert.models.input_validation import validate_inputs
from kbert.models.raw_input_routing import RawInputRouting
from kbert.models.task_serialisation import TaskSerialisation


class BertTask(RawInputRouting, CompileDefaults, TaskSerialisation, keras.Model):
    """Base of the task models: a `BertBackbone` plus a small head.

    Subclasses build a functional graph in `__init__` from `backbone.input` (plus any
    `extra_inputs`) and name their head layers in `head_layer_names`. This class adds
    what every task shares: input validation, the preprocessor that lets `fit`,
    `evaluate` and `predict` take raw strings (`RawInputRouting`), default `compile`
    arguments (`CompileDefaults`), the `get_config`/`from_config` round trip (a
    `.keras` file keeps the tokenizer) and preset saving (`TaskSerialisation`), and
    preset loading (`from_preset`, here).

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
        # The model's policy is its backbone's, which every head layer follows too.
        self.dtype_policy = backbone.dtype_policy
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

    def head_layers(self):
        return [self.get_layer(name) for name in self.head_layer_names]

    def __call__(self, inputs, *args, **kwargs):
        validate_inputs(inputs, self.backbone.bert_config, self.extra_inputs)
        return super().__call__(inputs, *args, **kwargs)

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
