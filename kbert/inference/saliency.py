"""Token saliency: how much each word-piece of a text matters to a label or an entity.

Three methods, all on every backend:

- occlusion: each piece of the text is replaced by `[MASK]` in turn (one copy of the
  text per piece, all of one length, so they run in sorted, bucketed batches through
  the compiled forward pass); the score is the drop of the target's probability.
- gradient x input: the gradient of the target's probability with respect to each
  piece's token embedding (the `token_embedding` lookup, before position and segment
  embeddings are added), dotted with that embedding.
- integrated gradients (Sundararajan et al., 2017): the same gradient averaged at
  `steps` points on the straight path from a baseline to the embeddings (midpoint
  rule), dotted with (embedding - baseline). The baseline replaces the text's pieces
  by the `[PAD]` embedding ("pad") or by zeros ("zero"); `[CLS]`, `[SEP]`, positions
  and segments are kept. The scores add up to `f(text) - f(baseline)` up to the
  quadrature error, which shrinks as `steps` grows.

Gradients come from the task's `with_token_vectors()` view and one small module per
backend (`kbert.inference.probability_gradients`).
"""

import dataclasses

import numpy as np
from keras import ops

from kbert.argument_checks import check_positive_int
from kbert.inference.model_io import model_buckets
from kbert.inference.model_io import predict_in_batches
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import sequence_limit
from kbert.inference.model_io import softmax
from kbert.inference.probability_gradients import probability_gradients
from kbert.inference.saliency_targets import CLASSIFIER_INPUT
from kbert.inference.saliency_targets import resolve_target
from kbert.inference.token_saliency import TokenSaliency
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.preprocessing.length_buckets import bucket_length
from kbert.preprocessing.length_buckets import row_bucket
from kbert.preprocessing.text_encoding import encode_texts

METHODS = ("occlusion", "gradient_x_input", "integrated_gradients")
BASELINES = ("pad", "zero")
DEFAULT_STEPS = 32


def saliency(
    model,
    tokenizer,
    text,
    target=None,
    method="occlusion",
    steps=DEFAULT_STEPS,
    baseline="pad",
    batch_size=DEFAULT_BATCH_SIZE,
    pair=None,
):
    """One score per word-piece of `text` (and of `pair`): how much it supports `target`.

    Args:
        model: a `BertClassifier` or a `BertTokenClassifier`.
        tokenizer: a `BertTokenizer`; None uses `model.tokenizer`.
        text: a string. A text longer than the model's limit is truncated (with a
            warning) and only the kept pieces are scored.
        target: for a classifier, a label name, a class index, or None for the
            most probable class; for a tagger, an `EntitySpan` of the text (from
            `tag`), or None for the first entity found.
        method: "occlusion", "gradient_x_input" or "integrated_gradients".
        steps: integrated gradients' points on the path from the baseline.
        baseline: integrated gradients' baseline for the text's pieces: "pad"
            (the `[PAD]` embedding) or "zero".
        batch_size: rows per forward (or gradient) pass.
        pair: a classifier's second text, or None; its pieces are scored too, after
            the text's (`TokenSaliency.sequence_ids` says which text each is of).

    Returns:
        A `TokenSaliency`.

    Examples:

    >>> result = saliency(model, None, "A wonderful film.", method="occlusion")
    >>> result.target, result.tokens
    ('positive', ('a', 'wonderful', 'film', '.'))
    >>> result.scores.round(2)
    array([0.01, 0.62, 0.05, 0.  ], dtype=float32)
    """
    _check_choices(text, method, baseline)
    steps = check_positive_int("steps", steps)
    batch_size = check_positive_int("batch_size", batch_size)
    _check_pair(model, pair)
    tokenizer = resolve_tokenizer(model, tokenizer)
    pairs = None if pair is None else [pair]
    (encoding,) = encode_texts(tokenizer, [text], pairs, sequence_limit(model, tokenizer))
    if not np.any(encoding.sequence_ids == 0):
        raise ValueError(f"`text` has no word-piece to score. Received: text={text!r}")
    positions = np.flatnonzero(encoding.sequence_ids >= 0)
    resolved = resolve_target(model, tokenizer, text, encoding, target)
    if method == "occlusion":
        scores, target_score = _occlusion(
            model, tokenizer, encoding, positions, resolved, batch_size
        )
        baseline_score = None
    else:
        scores, target_score, baseline_score = _gradient_scores(
            model, tokenizer, encoding, positions, resolved, method, steps, baseline, batch_size
        )
    offsets = encoding.offsets[positions]
    return TokenSaliency(
        text=text,
        tokens=tuple(encoding.tokens[index] for index in positions),
        offsets=tuple((int(start), int(end)) for start, end in offsets),
        positions=tuple(int(index) for index in positions),
        scores=np.asarray(scores, dtype=np.float32),
        method=method,
        target=resolved.label,
        target_span=resolved.span,
        target_score=float(target_score),
        baseline_score=None if baseline_score is None else float(baseline_score),
        steps=steps if method == "integrated_gradients" else None,
        pair=pair,
        sequence_ids=tuple(int(encoding.sequence_ids[index]) for index in positions),
    )


def _check_choices(text, method, baseline):
    """Raises ValueError unless `text` is a string and `method`, `baseline` are known."""
    if not isinstance(text, str):
        raise ValueError(
            f"`text` must be a string. Received: text={text!r} of type {type(text).__name__}"
        )
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {list(METHODS)}. Received: method={method!r}")
    if baseline not in BASELINES:
        raise ValueError(
            f"`baseline` must be one of {list(BASELINES)}. Received: baseline={baseline!r}"
        )


def _check_pair(model, pair):
    """Raises ValueError unless `pair` is None, or a string for a classifier."""
    if pair is None:
        return
    if not isinstance(pair, str):
        raise ValueError(
            f"`pair` must be None or a string. Received: pair={pair!r} of type "
            f"{type(pair).__name__}"
        )
    if getattr(model, "head_input", None) != CLASSIFIER_INPUT:
        raise ValueError(
            "`pair` is a classifier's second text; a token classifier reads one text. "
            f"Received: model of type {type(model).__name__}"
        )


def _occlusion(model, tokenizer, encoding, positions, target, batch_size):
    """Scores (T,) and the target's probability: the text first, then one copy per piece."""
    copies = [encoding]
    for position in positions:
        token_ids = encoding.token_ids.copy()
        token_ids[position] = tokenizer.mask_token_id
        copies.append(dataclasses.replace(encoding, token_ids=token_ids))
    values = np.zeros(len(copies), np.float32)
    for rows, logits in predict_in_batches(model, tokenizer, copies, batch_size):
        probabilities = softmax(logits[: len(rows)])  # (B, C) or (B, L_bucket, C)
        weights = _padded_weights(target.weights, probabilities.shape[1])
        values[rows] = (probabilities * weights).reshape(len(rows), -1).sum(axis=1)
    return values[0] - values[1:], float(values[0])


def _gradient_scores(
    model, tokenizer, encoding, positions, target, method, steps, baseline, batch_size
):
    """Gradient x input or integrated gradients: scores (T,), f(text), f(baseline) or None."""
    vectors, inputs = _token_vectors(model, tokenizer, encoding)
    weights = _padded_weights(target.weights, vectors.shape[0])
    view = model.with_token_vectors()
    if method == "gradient_x_input":
        values, gradients = _gradients(view, inputs, vectors[None], weights, 1)
        return (gradients[0] * vectors).sum(axis=-1)[positions], float(values[0]), None
    start = _baseline(model, tokenizer, vectors, positions, baseline)
    scores, target_score, baseline_score = _integrated_gradients(
        view, inputs, vectors, start, weights, steps, batch_size
    )
    return scores[positions], target_score, baseline_score


def _padded_weights(weights, length):
    """A tagger's (L, C) weights padded with zeros to `length` rows; a class's as they are."""
    if weights.ndim == 1:
        return weights
    return np.pad(weights, [(0, length - weights.shape[0]), (0, 0)])


def _token_vectors(model, tokenizer, encoding):
    """The token embeddings (L_bucket, H) of the padded text and its other inputs."""
    length = bucket_length(len(encoding), model_buckets(model))
    batch = tokenizer.pad([encoding], sequence_length=length)
    vectors = _embedding_rows(model, batch["token_ids"][0])
    others = {key: batch[key] for key in ("segment_ids", "padding_mask")}
    return vectors, others


def _embedding_rows(model, token_ids):
    """Rows of the model's token embedding table as float32 (len(token_ids), H)."""
    table = model.backbone.token_embedding.embeddings
    rows = ops.take(table, ops.convert_to_tensor(np.asarray(token_ids, "int32")), axis=0)
    return np.asarray(ops.convert_to_numpy(ops.cast(rows, "float32")))


def _baseline(model, tokenizer, vectors, positions, baseline):
    """The vectors with the text's pieces replaced by `[PAD]`'s embedding or zeros."""
    start = vectors.copy()
    if baseline == "zero":
        start[positions] = 0.0
    else:
        start[positions] = _embedding_rows(model, [tokenizer.pad_token_id])[0]
    return start


def _gradients(view, inputs, vectors, weights, count, padded_count=None):
    """`probability_gradients` on `count` rows, padded (row 0 repeated) to `padded_count`
    rows, by default their row bucket."""
    repeats = np.zeros(padded_count or row_bucket(count), dtype=np.int64)
    repeats[:count] = np.arange(count)
    rows = {key: np.repeat(value, count, axis=0)[repeats] for key, value in inputs.items()}
    rows["token_vectors"] = vectors.astype(np.float32)[repeats]
    row_weights = np.repeat(weights[None], len(repeats), axis=0).astype(np.float32)
    values, gradients = probability_gradients(view, rows, row_weights)
    return values[:count], gradients[:count]


def _integrated_gradients(view, inputs, vectors, start, weights, steps, batch_size):
    """Attributions (L_bucket,), f(vectors) and f(start), by the midpoint rule."""
    alphas = (np.arange(steps, dtype=np.float32) + 0.5) / steps
    difference = vectors - start  # (L, H)
    # The path's points, then the input and the baseline themselves (for their values).
    points = np.concatenate(
        [start[None] + alphas[:, None, None] * difference[None], vectors[None], start[None]]
    )  # (steps + 2, L, H)
    gradient_sum = np.zeros_like(vectors)
    values = np.zeros(len(points), np.float32)
    # Every chunk, the last included, has one row count: one compiled gradient program.
    padded_count = row_bucket(min(batch_size, len(points)))
    for first in range(0, len(points), batch_size):
        chunk = points[first : first + batch_size]
        chunk_values, gradients = _gradients(
            view, inputs, chunk, weights, len(chunk), padded_count
        )
        values[first : first + len(chunk)] = chunk_values
        on_path = max(0, min(len(chunk), steps - first))
        gradient_sum += gradients[:on_path].sum(axis=0)
    attributions = (gradient_sum / steps * difference).sum(axis=-1)
    return attributions, float(values[steps]), float(values[steps + 1])
