"""What every inference call shares: the tokenizer, the length limit, batching, softmax.

The model is duck-typed: anything with `predict_on_batch(dict)`, a `bert_config`
(for `max_positions` and `vocabulary_size`) and optionally a `tokenizer` attribute.
`predict_on_batch` is Keras's compiled single-batch forward pass: on JAX and
TensorFlow it is traced and compiled once per input shape and reused afterwards,
which is why every batch is first padded to a length bucket and a row bucket
(`kbert.preprocessing.length_buckets`).

Every entry that takes several texts runs them through `batch_indices`: sorted by
token length, longest first, batched, each batch padded to its own bucket (so the
padding of each batch stays within `inference_padding_bound` of its longest row), results written back
at the caller's positions.
"""

import numpy as np

from kbert.preprocessing.length_buckets import INFERENCE_LENGTH_BUCKETS
from kbert.preprocessing.length_buckets import bucket_length
from kbert.preprocessing.length_buckets import length_buckets
from kbert.preprocessing.length_buckets import pad_rows
from kbert.preprocessing.length_buckets import row_bucket


def resolve_tokenizer(model, tokenizer):
    """`tokenizer`, else `model.tokenizer`; checked against the model's vocabulary."""
    if tokenizer is None:
        tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None:
        raise ValueError(
            f"{type(model).__name__} has no tokenizer: load it with `from_preset` from a "
            "preset that has a vocabulary, set `model.tokenizer`, or give the "
            "`kbert.inference` function a tokenizer. Received: tokenizer=None"
        )
    model_vocabulary = model.bert_config.vocabulary_size
    if tokenizer.vocabulary_size > model_vocabulary:
        raise ValueError(
            f"The tokenizer has {tokenizer.vocabulary_size} tokens but the model only "
            f"{model_vocabulary} token embeddings; they do not belong together. "
            f"Received: tokenizer={tokenizer!r}"
        )
    return tokenizer


def sequence_limit(model, tokenizer):
    """The longest input (`[CLS] ... [SEP]` included) both the model and the tokenizer accept."""
    return min(int(model.bert_config.max_positions), int(tokenizer.max_length))


def model_buckets(model):
    """The inference length buckets of `model` (see `length_buckets`)."""
    return length_buckets(int(model.bert_config.max_positions), INFERENCE_LENGTH_BUCKETS)


def batch_indices(lengths, batch_size):
    """Row indices in batches of `batch_size`, longest rows first.

    Rows of similar length share a batch, so each batch pads to a tight bucket.
    """
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def pad_batch(tokenizer, encodings, buckets, longest=None):
    """Pads encodings to a length bucket and a row bucket (`row_bucket`).

    Args:
        tokenizer: pads the token ids with its `[PAD]`.
        encodings: objects with `token_ids`, `segment_ids` and a length
            (`Encoding`, `QAWindow`).
        buckets: the model's length buckets.
        longest: pad to the bucket of this length rather than of the longest
            encoding (so that several batches share one shape).

    Returns:
        The model inputs `token_ids`, `segment_ids`, `padding_mask`; rows beyond
        `len(encodings)` repeat row 0 and are to be ignored.
    """
    if longest is None:
        longest = max(len(encoding) for encoding in encodings)
    length = bucket_length(longest, buckets)
    batch = tokenizer.pad(encodings, sequence_length=length)
    return pad_rows(batch, row_bucket(len(encodings)))


def predict_in_batches(model, tokenizer, encodings, batch_size, same_length=False):
    """Runs the model over encodings, longest first, one padded batch at a time.

    Args:
        model: the model.
        tokenizer: pads with its `[PAD]`.
        encodings: a list of `Encoding` (or `QAWindow`).
        batch_size: rows per forward pass.
        same_length: pad every batch to the bucket of the longest encoding, so that
            all outputs have the same sequence length.

    Yields:
        `(rows, outputs)`: the indices into `encodings` of a batch, and the model's
        outputs, whose first `len(rows)` rows belong to them, in that order.
    """
    buckets = model_buckets(model)
    lengths = [len(encoding) for encoding in encodings]
    longest = max(lengths) if same_length else None
    for rows in batch_indices(lengths, batch_size):
        inputs = pad_batch(tokenizer, [encodings[row] for row in rows], buckets, longest)
        yield rows, predict(model, inputs)


def predict(model, inputs):
    """One compiled forward pass on host arrays; outputs as NumPy arrays."""
    return model.predict_on_batch(inputs)


def softmax(logits, axis=-1):
    """A numerically stable softmax in float32 (float64 for float64 input)."""
    logits = np.asarray(logits)
    if logits.dtype != np.float64:
        logits = logits.astype(np.float32)
    shifted = logits - np.max(logits, axis=axis, keepdims=True)
    exponentials = np.exp(shifted)
    return exponentials / np.sum(exponentials, axis=axis, keepdims=True)
