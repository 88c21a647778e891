"""Attention weights of every layer and head for one text or pair, for the app's views.

The weights come from the backbone's explicit-softmax path
(`BertBackbone.with_attention_weights`); the normal forward pass keeps the fused
kernel. The input is padded to a length bucket like every other inference call, and
the padding is cut off again, so the map covers the text's real tokens only
(`[CLS]` and `[SEP]` included). A pair is packed as `[CLS] a [SEP] b [SEP]`, and
`AttentionMap.block` cuts out how one segment attends to the other.
"""

from dataclasses import dataclass

import numpy as np

from kbert.inference.model_io import model_buckets
from kbert.inference.model_io import pad_batch
from kbert.inference.model_io import predict
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import sequence_limit
from kbert.preprocessing.text_encoding import encode_texts

# The segment ids of a pair's two parts: A is `[CLS] text [SEP]`, B is `pair [SEP]`.
SEGMENT_A, SEGMENT_B = 0, 1


@dataclass(frozen=True, eq=False)
class AttentionMap:
    """Where each token of a text (or a pair of texts) attends, in every layer and head.

    Args:
        text: the caller's text.
        tokens: the `L` token strings, `[CLS]` first and `[SEP]` last.
        offsets: `L` `(start, end)` character offsets into `text` (into `pair` for
            the tokens of segment B); `(0, 0)` for `[CLS]` and `[SEP]`.
        weights: float32 array (layers, heads, L, L): `weights[l, h, i, j]` is the
            attention of token `i` (the query) to token `j` (the key) in head `h`
            of layer `l`. Each row sums to 1.
        segment_ids: `L` segment ids: 0 for segment A (`[CLS] text [SEP]`), 1 for
            segment B (`pair [SEP]`).
        pair: the caller's second text, or None.
    """

    text: str
    tokens: tuple
    offsets: tuple
    weights: np.ndarray
    segment_ids: tuple
    pair: object = None

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

    @property
    def has_pair(self):
        """Whether the map has a segment B (the input was a pair of texts)."""
        return SEGMENT_B in self.segment_ids

    def segment_positions(self, segment):
        """The token indices of `segment` (`SEGMENT_A` or `SEGMENT_B`), in order."""
        if segment not in (SEGMENT_A, SEGMENT_B):
            raise ValueError(
                f"`segment` must be {SEGMENT_A} (A) or {SEGMENT_B} (B). Received: segment={segment!r}"
            )
        return np.flatnonzero(np.asarray(self.segment_ids) == segment)

    def segment_tokens(self, segment):
        """The token strings of `segment`, in order."""
        return tuple(self.tokens[index] for index in self.segment_positions(segment))

    def block(self, queries, keys, layer=None, head=None):
        """How the tokens of segment `queries` attend to those of segment `keys`.

        Args:
            queries: the segment of the rows, `SEGMENT_A` or `SEGMENT_B`.
            keys: the segment of the columns.
            layer: as in `select`.
            head: as in `select`.

        Returns:
            A float32 array (rows of `queries`, tokens of `keys`): the sub-block
            `select(layer, head)[queries' tokens][:, keys' tokens]`. Its rows sum
            to the share of attention that stays within the block, at most 1.
        """
        rows = self.segment_positions(queries)
        columns = self.segment_positions(keys)
        return self.select(layer, head)[np.ix_(rows, columns)]


def attention_map(model, tokenizer, text, pair=None):
    """The attention weights of every layer and head of `model` for `text`.

    Args:
        model: a task model with a `backbone` (`BertMaskedLM`, ...) or a
            `BertBackbone`.
        tokenizer: a `BertTokenizer`; None uses `model.tokenizer`.
        text: a string. A text longer than the model's limit is truncated (with a
            warning), and the map covers the kept tokens.
        pair: None, or a second string: the input is then `[CLS] text [SEP] pair
            [SEP]` with segment ids 1 for `pair [SEP]`, as BERT reads sentence pairs.

    Returns:
        An `AttentionMap`.

    Examples:

    >>> result = attention_map(model, None, "The cat sat.")
    >>> result.tokens
    ('[CLS]', 'the', 'cat', 'sat', '.', '[SEP]')
    >>> result.weights.shape  # 2 layers, 4 heads
    (2, 4, 6, 6)
    >>> pair = attention_map(model, None, "The cat sat.", "It slept.")
    >>> pair.segment_tokens(SEGMENT_B)
    ('it', 'slept', '.', '[SEP]')
    >>> pair.block(SEGMENT_A, SEGMENT_B, layer=0, head=1).shape
    (6, 4)
    """
    for name, value in (("text", text), ("pair", pair)):
        if not isinstance(value, str) and not (name == "pair" and value is None):
            kind = "a string" if name == "text" else "None or a string"
            raise ValueError(
                f"`{name}` must be {kind}. Received: {name}={value!r} of type "
                f"{type(value).__name__}"
            )
    tokenizer = resolve_tokenizer(model, tokenizer)
    backbone = getattr(model, "backbone", model)
    pairs = None if pair is None else [pair]
    (encoding,) = encode_texts(tokenizer, [text], pairs, sequence_limit(model, tokenizer))
    inputs = pad_batch(tokenizer, [encoding], model_buckets(model))
    outputs = predict(_built(backbone.with_attention_weights(), inputs), inputs)
    length = len(encoding)
    weights = np.asarray(outputs["attention_weights"], dtype=np.float32)
    return AttentionMap(
        text=text,
        tokens=tuple(encoding.tokens),
        offsets=tuple((int(start), int(end)) for start, end in encoding.offsets),
        weights=weights[0, :, :, :length, :length],  # (layers, heads, L, L)
        segment_ids=tuple(int(segment) for segment in encoding.segment_ids),
        pair=pair,
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
