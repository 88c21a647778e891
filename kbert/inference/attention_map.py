"""Attention weights of every layer and head for one text, for the app's heat map.

The weights come from the backbone's explicit-softmax path
(`BertBackbone.with_attention_weights`); the normal forward pass keeps the fused
kernel. The input is padded to a length bucket like every other inference call, and
the padding is cut off again, so the map covers the text's real tokens only
(`[CLS]` and `[SEP]` included).
"""

from dataclasses import dataclass

import numpy as np

from kbert.inference.model_io import model_buckets
from kbert.inference.model_io import pad_batch
from kbert.inference.model_io import predict
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import sequence_limit
from kbert.preprocessing.text_encoding import encode_texts


@dataclass(frozen=True, eq=False)
class AttentionMap:
    """Where each token of a text attends, in every layer and head.

    Args:
        text: the caller's text.
        tokens: the `L` token strings, `[CLS]` first and `[SEP]` last.
        offsets: `L` `(start, end)` character offsets into `text`; `(0, 0)` for
            `[CLS]` and `[SEP]`.
        weights: float32 array (layers, heads, L, L): `weights[l, h, i, j]` is the
            attention of token `i` (the query) to token `j` (the key) in head `h`
            of layer `l`. Each row sums to 1.
    """

    text: str
    tokens: tuple
    offsets: tuple
    weights: np.ndarray

    @property
    def num_layers(self):
        return int(self.weights.shape[0])

    @property
    def num_heads(self):
        return int(self.weights.shape[1])

    def select(self, layer=None, head=None):
        """The (L, L) map of one layer and head; None averages over that axis.

        Args:
            layer: a layer index (0 is the first), or None for the average of layers.
            head: a head index, or None for the average of heads.

        Returns:
            A float32 array (L, L) whose rows sum to 1.
        """
        for name, value, count in (
            ("layer", layer, self.num_layers),
            ("head", head, self.num_heads),
        ):
            if value is not None and not (
                isinstance(value, (int, np.integer))
                and not isinstance(value, bool)
                and 0 <= value < count
            ):
                raise ValueError(
                    f"`{name}` must be None or an index below {count}. "
                    f"Received: {name}={value!r}"
                )
        weights = self.weights
        weights = weights.mean(axis=0) if layer is None else weights[layer]  # (N, L, L)
        weights = weights.mean(axis=0) if head is None else weights[head]  # (L, L)
        return weights.astype(np.float32)


def attention_map(model, tokenizer, text):
    """The attention weights of every layer and head of `model` for `text`.

    Args:
        model: a task model with a `backbone` (`BertMaskedLM`, ...) or a
            `BertBackbone`.
        tokenizer: a `BertTokenizer`; None uses `model.tokenizer`.
        text: a string. A text longer than the model's limit is truncated (with a
            warning), and the map covers the kept tokens.

    Returns:
        An `AttentionMap`.

    Examples:

    >>> result = attention_map(model, None, "The cat sat.")
    >>> result.tokens
    ('[CLS]', 'the', 'cat', 'sat', '.', '[SEP]')
    >>> result.weights.shape  # 2 layers, 4 heads
    (2, 4, 6, 6)
    """
    if not isinstance(text, str):
        raise ValueError(
            f"`text` must be a string. Received: text={text!r} of type {type(text).__name__}"
        )
    tokenizer = resolve_tokenizer(model, tokenizer)
    backbone = getattr(model, "backbone", model)
    (encoding,) = encode_texts(tokenizer, [text], None, sequence_limit(model, tokenizer))
    inputs = pad_batch(tokenizer, [encoding], model_buckets(model))
    outputs = predict(_built(backbone.with_attention_weights(), inputs), inputs)
    length = len(encoding)
    weights = np.asarray(outputs["attention_weights"], dtype=np.float32)
    return AttentionMap(
        text=text,
        tokens=tuple(encoding.tokens),
        offsets=tuple((int(start), int(end)) for start, end in encoding.offsets),
        weights=weights[0, :, :, :length, :length],  # (layers, heads, L, L)
    )


def _built(model, inputs):
    """`model`, built by one symbolic call if it never ran.

    Keras's JAX `predict_on_batch` builds an unbuilt model by running it eagerly, op by
    op, each op compiled on its own: some 50 small compilations, 4-5 times the cost of
    compiling the whole forward pass. A symbolic call builds it in a fraction of a second.
    """
    if not model.built:
        import keras

        model(
            {
                name: keras.KerasTensor(value.shape, keras.backend.standardize_dtype(value.dtype))
                for name, value in inputs.items()
            }
        )
    return model
