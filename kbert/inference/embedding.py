"""Feature extraction: hidden states of chosen layers, per token or pooled per text.

The feature-based approach of the BERT paper (section 5.3): the encoder is frozen and
the activations of one or more layers serve as fixed features for another model. The
paper's best token-level features for CoNLL-2003 NER concatenate the last four layers,
which is the default here (every layer of a model with fewer than four). Pooled over a
text they give sentence vectors: "mean" is sentence-transformers' mean pooling (every
non-padding token, `[CLS]` and `[SEP]` included), "cls" the `[CLS]` token's vector.

Hidden states come from the backbone's cached `with_hidden_states()` view: index 0 is
the embeddings output, index `i` the output of encoder block `i`, as transformers'
`output_hidden_states`. Batches are padded to length buckets like every inference call
(`kbert.inference.model_io`), so the view compiles once per bucket; layer selection,
combination and pooling then run in NumPy over the real tokens only.
"""

import numpy as np

from kbert.inference.model_io import inference_batch_size
from kbert.inference.model_io import predict_in_batches
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import sequence_limit
from kbert.inference.results import TokenEmbeddings
from kbert.preprocessing.text_encoding import texts_and_pairs
from kbert.preprocessing.text_encoding import encode_texts

# The paper's feature-based choice: the last four encoder blocks.
DEFAULT_LAYER_COUNT = 4
COMBINES = ("concat", "mean", "sum")
POOLINGS = ("none", "cls", "mean")


def embed(
    model,
    tokenizer,
    texts,
    pairs=None,
    layers=None,
    combine="concat",
    pooling="none",
    batch_size=None,
):
    """Feature vectors of one or several texts from chosen layers of a BERT encoder.

    Args:
        model: a `BertBackbone`, or any task model with a `backbone` (its head is
            not used).
        tokenizer: a `BertTokenizer`; None uses `model.tokenizer`. A backbone
            loaded with `BertBackbone.from_preset` has none: pass
            `BertTokenizer.from_preset(same_preset)`.
        texts: a string or a list of strings (or records, a DataFrame or a
            `datasets.Dataset` with a "text" field, and "pair" for pairs). Texts
            longer than the model's limit are truncated with a warning.
        pairs: None, or the second text of each pair (a string for a string, a
            list as long as `texts` for a list), as `[CLS] a [SEP] b [SEP]`.
        layers: indices into the `num_layers + 1` hidden states: 0 is the
            embeddings output, 1 to `num_layers` the encoder blocks' outputs;
            negative indices count from the end (-1 is the last block). An int
            means one layer. Each layer at most once. None: the last four
            blocks, (-4, -3, -2, -1), or every block of a model with fewer
            (demo-tiny's two: (-2, -1)); never the embeddings output.
        combine: how the chosen layers make one vector per token: "concat" joins
            them in the order of `layers` (D = len(layers) * H), "mean" averages
            and "sum" adds them (D = H).
        pooling: "none" keeps one vector per token; "mean" averages over every
            real token of a text (`[CLS]` and `[SEP]` included, padding left out:
            sentence-transformers' mean pooling); "cls" takes the `[CLS]` token's
            vector (the combined hidden states, not the pooler's tanh output).
        batch_size: texts per forward pass (None: `inference_batch_size()`).

    Returns:
        With pooling "none": a `TokenEmbeddings` for a string, a list of them for a
        list. With "mean" or "cls": a float32 array (D,) for a string, (N, D) for a
        list of N strings, rows in input order.

    Examples:

    >>> backbone = BertBackbone.from_preset("demo")
    >>> tokenizer = BertTokenizer.from_preset("demo")
    >>> result = embed(backbone, tokenizer, "The cat sat.")
    >>> result.tokens
    ('[CLS]', 'the', 'ca', '##t', 'sat', '.', '[SEP]')
    >>> result.vectors.shape  # the 256-wide demo's four blocks, concatenated
    (7, 1024)
    >>> embed(backbone, tokenizer, ["a", "b c"], layers=-1, pooling="mean").shape
    (2, 256)
    """
    backbone = getattr(model, "backbone", model)
    layer_indices = resolve_layers(layers, backbone.bert_config.num_layers)
    _check_choice("combine", combine, COMBINES)
    _check_choice("pooling", pooling, POOLINGS)
    batch_size = inference_batch_size(batch_size)
    texts, pairs, single = texts_and_pairs(texts, pairs, "texts")
    tokenizer = _backbone_tokenizer(model, tokenizer)
    encodings = encode_texts(tokenizer, texts, pairs, sequence_limit(backbone, tokenizer))
    features = _features(
        backbone, tokenizer, encodings, layer_indices, combine, pooling, batch_size
    )
    if pooling == "none":
        features = _token_embeddings(texts, pairs, encodings, features)
    return features[0] if single else features


def _backbone_tokenizer(model, tokenizer):
    """`resolve_tokenizer`, with what a bare backbone (which has none) needs said."""
    if tokenizer is None and getattr(model, "tokenizer", None) is None:
        raise ValueError(
            f"{type(model).__name__} has no tokenizer: pass `tokenizer=` (for a backbone "
            "loaded with `BertBackbone.from_preset(preset)`, "
            "`BertTokenizer.from_preset(preset)`). Received: tokenizer=None"
        )
    return resolve_tokenizer(model, tokenizer)


def _token_embeddings(texts, pairs, encodings, token_vectors):
    """A `TokenEmbeddings` per text, from its encoding and its (L, D) vectors."""
    return [
        TokenEmbeddings(
            text=text,
            pair=None if pairs is None else pairs[index],
            tokens=tuple(encoding.tokens),
            offsets=tuple((int(start), int(end)) for start, end in encoding.offsets),
            sequence_ids=tuple(int(value) for value in encoding.sequence_ids),
            vectors=token_vectors[index],
        )
        for index, (text, encoding) in enumerate(zip(texts, encodings))
    ]


def _features(backbone, tokenizer, encodings, layer_indices, combine, pooling, batch_size):
    """The backbone's features of every encoding, in order.

    Returns:
        With pooling "none", a list of (L_i, D) arrays, one per encoding (its real
        tokens); else one (N, D) float32 array.
    """
    view = backbone.with_hidden_states()
    dimension = backbone.bert_config.hidden_size * (
        len(layer_indices) if combine == "concat" else 1
    )
    pooled = np.zeros((len(encodings), dimension), dtype=np.float32)
    token_vectors = [None] * len(encodings)
    for rows, outputs in predict_in_batches(view, tokenizer, encodings, batch_size):
        hidden_states = _as_float(outputs["hidden_states"][: len(rows)])  # (R, layers + 1, L, H)
        vectors = combine_layers(hidden_states[:, layer_indices], combine)  # (R, L, D)
        lengths = np.array([len(encodings[row]) for row in rows])
        if pooling == "none":
            for row, row_vectors, length in zip(rows, vectors, lengths):
                token_vectors[row] = row_vectors[:length]
        else:
            pooled[rows] = pool_tokens(vectors, lengths, pooling)
    return token_vectors if pooling == "none" else pooled


def _check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"`{name}` must be one of {list(choices)}. Received: {name}={value!r}")


def resolve_layers(layers, num_layers):
    """`layers` as non-negative indices into the `num_layers + 1` hidden states.

    Args:
        layers: an int or a sequence of ints in `[-(num_layers + 1), num_layers]`;
            None for the default, the last `min(4, num_layers)` encoder blocks.
        num_layers: the backbone's number of encoder blocks.

    Returns:
        A list of ints in `[0, num_layers]`, in the given order.

    Examples:

    >>> resolve_layers((-4, -3, -2, -1), num_layers=12)
    [9, 10, 11, 12]
    >>> resolve_layers(None, num_layers=2)
    [1, 2]
    >>> resolve_layers(0, num_layers=2)
    [0]
    """
    count = num_layers + 1
    if layers is None:
        return list(range(count - min(DEFAULT_LAYER_COUNT, num_layers), count))
    given = layers
    if _is_index(layers):
        layers = (layers,)
    elif isinstance(layers, (str, bytes)) or not hasattr(layers, "__iter__"):
        raise ValueError(
            f"`layers` must be a layer index or a sequence of them. Received: layers={layers!r}"
        )
    layers = tuple(layers)
    if not layers:
        raise ValueError(f"`layers` must name at least one layer. Received: layers={given!r}")
    resolved = {}
    for layer in layers:
        if not _is_index(layer) or not -count <= layer < count:
            raise ValueError(
                f"`layers` must hold indices from {-count} to {num_layers}: 0 is the "
                f"embeddings output, 1 to {num_layers} the encoder blocks, -1 the last. "
                f"Received: layers={given!r} ({layer!r} is not one)"
            )
        index = int(layer) % count
        if index in resolved:
            raise ValueError(
                f"`layers` names hidden state {index} twice (as {resolved[index]!r} and "
                f"{layer!r}). Received: layers={given!r}"
            )
        resolved[index] = layer
    return list(resolved)


def combine_layers(hidden_states, combine):
    """Joins the chosen layers' states into one vector per token.

    Args:
        hidden_states: array (B, K, L, H), the chosen layers in order.
        combine: "concat", "mean" or "sum" (see `embed`).

    Returns:
        An array (B, L, K * H) for "concat", (B, L, H) otherwise.
    """
    if combine == "concat":
        batch, count, length, width = hidden_states.shape
        # Token-major: each token's vector is [layer 1 | layer 2 | ...].
        return hidden_states.transpose(0, 2, 1, 3).reshape(batch, length, count * width)
    if combine == "mean":
        return hidden_states.mean(axis=1)
    return hidden_states.sum(axis=1)


def pool_tokens(vectors, lengths, pooling):
    """One vector per row from its first `lengths[row]` token vectors.

    Args:
        vectors: array (B, L, D).
        lengths: int array (B,), each row's number of real tokens.
        pooling: "mean" (over the real tokens) or "cls" (token 0).

    Returns:
        An array (B, D).
    """
    if pooling == "cls":
        return vectors[:, 0]
    real = np.arange(vectors.shape[1])[None, :] < np.asarray(lengths)[:, None]  # (B, L)
    total = np.einsum("bld,bl->bd", vectors, real.astype(vectors.dtype))
    return total / np.asarray(lengths, dtype=vectors.dtype)[:, None]


def _as_float(array):
    """Model outputs as float32 (bfloat16 and float16 states are widened)."""
    return np.asarray(array).astype(np.float32, copy=False)


def _is_index(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
