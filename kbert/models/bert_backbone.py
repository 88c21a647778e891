import dataclasses

import keras
import numpy as np
from keras import ops

from kbert.layers.bert_embeddings import BertEmbeddings
from kbert.layers.bert_encoder_block import BertEncoderBlock
from kbert.layers.bert_pooler import BertPooler
from kbert.layers.packed_sequences import packed_attention_mask, packed_position_ids
from kbert.architecture.bert_config import BertConfig
from kbert.models.input_validation import PACKED_INPUT, is_packed, validate_inputs

_CONFIG_FIELDS = tuple(field.name for field in dataclasses.fields(BertConfig))
# The input that replaces `token_ids` in `encode_token_vectors`: their embeddings (B, L, H).
TOKEN_VECTORS = "token_vectors"


def _backbone_inputs():
    return {
        "token_ids": keras.Input(shape=(None,), dtype="int32", name="token_ids"),
        "segment_ids": keras.Input(shape=(None,), dtype="int32", name="segment_ids"),
        "padding_mask": keras.Input(shape=(None,), dtype="int32", name="padding_mask"),
    }


def _encode(
    embeddings,
    encoder_blocks,
    pooler,
    inputs,
    return_attention_weights=False,
    return_hidden_states=False,
):
    """The forward pass, written once for the main model and its views.

    Packed rows (`sequence_index` among the inputs) attend within their own sequence
    and restart the positions at each one; without it, nothing of that is computed.
    """
    padding_mask = ops.cast(inputs["padding_mask"], "bool")
    attention_mask = position_ids = None
    if PACKED_INPUT in inputs:
        attention_mask = packed_attention_mask(inputs[PACKED_INPUT])  # (B, 1, L, L)
        position_ids = packed_position_ids(inputs[PACKED_INPUT])  # (B, L)
    if TOKEN_VECTORS in inputs:  # looked up (or blended) already: `encode_token_vectors`
        x = embeddings.combine(inputs[TOKEN_VECTORS], inputs["segment_ids"])  # (B, L, H)
    else:
        x = embeddings(inputs["token_ids"], inputs["segment_ids"], position_ids)  # (B, L, H)
    hidden_states = [x]
    attention_weights = []
    for block in encoder_blocks:
        if return_attention_weights:
            x, weights = block(
                x, padding_mask, return_attention_weights=True, attention_mask=attention_mask
            )
            attention_weights.append(weights)  # (B, N, L, L)
        else:
            x = block(x, padding_mask, attention_mask=attention_mask)
        hidden_states.append(x)
    outputs = {"sequence_output": x, "pooled_output": pooler(x)}
    if return_attention_weights:
        outputs["attention_weights"] = ops.stack(attention_weights, axis=1)  # (B, layers, N, L, L)
    if return_hidden_states:
        outputs["hidden_states"] = ops.stack(hidden_states, axis=1)  # (B, layers + 1, L, H)
    return outputs


class _BackboneView(keras.Model):
    """The backbone's layers run again, with extra outputs (see `BertBackbone`'s views).

    A subclassed model rather than a second functional graph: Keras cannot reuse a layer
    in a new functional graph with a different number of outputs.
    """

    def __init__(
        self, backbone, return_attention_weights=False, return_hidden_states=False, **kwargs
    ):
        super().__init__(**kwargs)
        self.backbone = backbone
        self.return_attention_weights = return_attention_weights
        self.return_hidden_states = return_hidden_states

    @property
    def bert_config(self):
        return self.backbone.bert_config

    def call(self, inputs):
        validate_inputs(inputs, self.backbone.bert_config, packed_inputs=())
        backbone = self.backbone
        return _encode(
            backbone.embeddings,
            backbone.encoder_blocks,
            backbone.pooler,
            inputs,
            return_attention_weights=self.return_attention_weights,
            return_hidden_states=self.return_hidden_states,
        )


@keras.saving.register_keras_serializable(package="kbert")
class BertBackbone(keras.Model):
    """The BERT encoder: embeddings, a stack of encoder blocks and the pooler.

    Every argument is a `BertConfig` field; see there for meanings and defaults.

    Inputs: dict of (B, L) int tensors `token_ids`, `segment_ids` and `padding_mask`
    (1 for real tokens, 0 for padding).
    Outputs: dict with `sequence_output` (B, L, H) and `pooled_output` (B, H).

    Packed rows: with a fourth input `sequence_index` (B, L), 1 on the tokens of the
    row's first sequence, 2 on the second's, ..., 0 on the padding after them (and
    `padding_mask` 1 exactly where it is not 0), each sequence attends only to itself
    (block-diagonal attention) and its position ids restart at 0 at its first token,
    so every sequence gets the `sequence_output` it would get alone in a row.
    `segment_ids` are each sequence's own. `pooled_output` reads position 0 (the
    first sequence); `pooler(sequence_output, cls_positions)` reads every sequence's
    [CLS]. Packed rows run the same layers through a view that shares the weights,
    not the functional graph, which keeps its three inputs: unpacked calls and saved
    models are the same as without packing.

    Inputs are validated before any computation: unknown keys, shape mismatches,
    sequences longer than `max_positions` and (for NumPy inputs) ids outside the
    vocabulary raise `ValueError`.

    Example:

    >>> backbone = BertBackbone.from_size("tiny", vocabulary_size=1000)
    >>> outputs = backbone({
    ...     "token_ids": np.array([[2, 7, 3]]),
    ...     "segment_ids": np.zeros((1, 3), "int32"),
    ...     "padding_mask": np.ones((1, 3), "int32"),
    ... })
    >>> outputs["sequence_output"].shape
    (1, 3, 128)
    """

    def __init__(
        self,
        vocabulary_size=30522,
        hidden_size=768,
        num_layers=12,
        num_heads=12,
        intermediate_size=3072,
        max_positions=512,
        type_vocabulary_size=2,
        hidden_dropout=0.1,
        attention_dropout=0.1,
        layer_norm_epsilon=1e-12,
        activation="gelu",
        initializer_range=0.02,
        dtype=None,
        **kwargs,
    ):
        # Every argument but `dtype` (and Keras' own) is a `BertConfig` field.
        arguments = locals()
        config = BertConfig(**{field: arguments[field] for field in _CONFIG_FIELDS})

        # === Layers ===
        embeddings = BertEmbeddings(
            vocabulary_size=vocabulary_size,
            hidden_size=hidden_size,
            max_positions=max_positions,
            type_vocabulary_size=type_vocabulary_size,
            dropout=hidden_dropout,
            layer_norm_epsilon=layer_norm_epsilon,
            initializer_range=initializer_range,
            dtype=dtype,
            name="embeddings",
        )
        encoder_blocks = [
            BertEncoderBlock(
                hidden_size=hidden_size,
                num_heads=num_heads,
                intermediate_size=intermediate_size,
                hidden_dropout=hidden_dropout,
                attention_dropout=attention_dropout,
                layer_norm_epsilon=layer_norm_epsilon,
                activation=activation,
                initializer_range=initializer_range,
                dtype=dtype,
                name=f"transformer_layer_{index}",
            )
            for index in range(num_layers)
        ]
        pooler = BertPooler(
            hidden_size, initializer_range=initializer_range, dtype=dtype, name="pooler"
        )

        # === Functional model ===
        inputs = _backbone_inputs()
        outputs = _encode(embeddings, encoder_blocks, pooler, inputs)
        super().__init__(inputs=inputs, outputs=outputs, dtype=dtype, **kwargs)
        if dtype is not None:
            # A functional model keeps the global policy whatever `dtype` says; the
            # layers were built with `dtype`, and `get_config` must say so too.
            self.dtype_policy = keras.dtype_policies.get(dtype)
        # Layers become attributes only after Model.__init__ (PyTorch modules must be
        # initialised before sub-modules are assigned).
        self.embeddings = embeddings
        self.encoder_blocks = encoder_blocks
        self.pooler = pooler

        # === Config ===
        self.bert_config = config

    # Convenience accessors used by the task heads and the checkpoint converters.
    @property
    def token_embedding(self):
        return self.embeddings.token_embedding

    @property
    def vocabulary_size(self):
        return self.bert_config.vocabulary_size

    @property
    def hidden_size(self):
        return self.bert_config.hidden_size

    def with_attention_weights(self):
        """A model sharing these weights whose outputs add `attention_weights`.

        The extra output has shape (B, num_layers, num_heads, L, L) and comes from the
        explicit softmax path; the normal outputs keep the fused kernel.
        """
        return self._view("attention_weights", return_attention_weights=True)

    def with_hidden_states(self):
        """A model sharing these weights whose outputs add `hidden_states`.

        The extra output has shape (B, num_layers + 1, L, H): index 0 is the embeddings
        output (after their LayerNorm), index `i` the output of encoder block `i`, so
        the last one equals `sequence_output`. This is transformers'
        `output_hidden_states=True`, stacked on one axis. Attention keeps the fused
        kernel. Padding positions hold values like any other position; mask them out
        with `padding_mask`.

        A separate, cached model rather than a third output of the backbone itself: the
        normal forward pass (and every task head built on it) would otherwise carry a
        (B, num_layers + 1, L, H) tensor it never reads, and the dict of outputs that
        task models and saved `.keras` files rely on would change. The view is built
        once and reused, so `predict_on_batch` compiles it once per input shape, like
        the backbone.

        Returns:
            A `keras.Model` taking the backbone's inputs.

        Examples:

        >>> view = backbone.with_hidden_states()
        >>> view is backbone.with_hidden_states()
        True
        >>> outputs = view.predict_on_batch(inputs)  # inputs: (2, 16) arrays
        >>> outputs["hidden_states"].shape  # 2 layers, H = 128
        (2, 3, 16, 128)
        """
        return self._view("hidden_states", return_hidden_states=True)

    def encode_token_vectors(self, inputs):
        """The backbone's outputs from token vectors (B, L, H) instead of token ids.

        `inputs` holds `token_vectors` (what `token_embedding` gives for the ids, or
        anything of that shape: a blend with a baseline, for integrated gradients),
        `segment_ids` and `padding_mask`. Called inside a model's `call` (a task's
        `with_token_vectors` view), so gradients with respect to the vectors flow.
        """
        return _encode(self.embeddings, self.encoder_blocks, self.pooler, inputs)

    def _view(self, output, inputs=None, **options):
        """The cached `_BackboneView` adding `output`, built by one symbolic call.

        `inputs` names the view's inputs (default: the backbone's); `options` are
        `_BackboneView`'s.
        """
        key = f"_{output}_model"
        model = self.__dict__.get(key)
        if model is None:
            model = _BackboneView(self, name=f"{self.name}_with_{output}", **options)
            # Keras's JAX `predict_on_batch` would build an unbuilt model by running it
            # eagerly, op by op, each op compiled on its own (some 50 compilations); a
            # symbolic call builds it in a fraction of a second. Concrete sizes, because
            # the input checks cannot compare JAX's symbolic ones.
            names = self.input if inputs is None else inputs
            model({name: keras.KerasTensor((1, 2), "int32") for name in names})
            # Stored untracked: tracking it would make the backbone its own grandchild.
            self.__dict__[key] = model
        return model

    def __call__(self, inputs, *args, **kwargs):
        if is_packed(inputs):
            validate_inputs(inputs, self.bert_config, packed_inputs=())
            return self._view("packed_rows", inputs=(*self.input, PACKED_INPUT))(
                inputs, *args, **kwargs
            )
        validate_inputs(inputs, self.bert_config)
        return super().__call__(inputs, *args, **kwargs)

    def predict(self, x, *args, **kwargs):
        if isinstance(x, (dict, np.ndarray)):
            validate_inputs(x, self.bert_config)
        return super().predict(x, *args, **kwargs)

    @classmethod
    def from_config_object(cls, config, **kwargs):
        """A backbone built from a `BertConfig`."""
        return cls(**config.to_dict(), **kwargs)

    @classmethod
    def from_size(cls, size, vocabulary_size=30522, **overrides):
        """A randomly initialised backbone of a published size ("tiny" ... "large")."""
        dtype = overrides.pop("dtype", None)
        name = overrides.pop("name", None)
        config = BertConfig.from_size(size, vocabulary_size=vocabulary_size, **overrides)
        return cls.from_config_object(config, dtype=dtype, name=name)

    @classmethod
    def from_preset(cls, preset, dtype=None, load_weights=True, **kwargs):
        """A `cls` with the backbone stored in a preset (any model source).

        Any preset serves, a task's too (its backbone). A preset saved from a registered
        subclass of `cls` gives that subclass.

        Args:
            preset: a preset folder, a built-in or published name, a Hugging Face,
                Google or keras-hub folder, or an `hf://` / `kaggle://` handle (see
                `kbert.presets.resolve_preset`).
            dtype: the dtype policy of the backbone ("float32", "bfloat16",
                "mixed_bfloat16", ...); None keeps Keras' global policy.
            load_weights: False builds the preset's architecture with freshly drawn
                weights (no weight file is read).
            **kwargs: other constructor arguments, such as `name`.

        Example:

        >>> backbone = BertBackbone.from_preset("demo", dtype="bfloat16")
        """
        from kbert.models.preset_loading import load_backbone

        return load_backbone(cls, preset, dtype=dtype, load_weights=load_weights, **kwargs)

    def save_to_preset(self, folder, tokenizer=None, metadata=None):
        """Writes this backbone (and `tokenizer`, if given) as a preset folder."""
        from kbert.models.preset_saving import save_preset

        save_preset(self, folder, tokenizer=tokenizer, metadata=metadata)

    def to_checkpoint_data(self, tokenizer=None):
        """This backbone (and `tokenizer`) as plain data, for `kbert.checkpoints`' writers."""
        from kbert.models.preset_saving import checkpoint_data

        return checkpoint_data(self, tokenizer)

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
            **self.bert_config.to_dict(),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if "dtype" in config and isinstance(config["dtype"], dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(**config)
