"""Text and text-pair classification: label probabilities for each input."""

import numpy as np

from kbert.inference.model_io import inference_batch_size
from kbert.inference.model_io import predict_in_batches
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import sequence_limit
from kbert.inference.model_io import softmax
from kbert.inference.inference_engine import engine_model
from kbert.inference.results import Classification
from kbert.preprocessing.long_text_windows import encode_long_texts
from kbert.preprocessing.long_text_windows import pooled_logits
from kbert.preprocessing.text_encoding import texts_and_pairs


def classify(
    model,
    tokenizer,
    text_or_texts,
    pairs=None,
    batch_size=None,
    engine="auto",
    quantize=None,
    long_texts=None,
):
    """Label probabilities for one or several texts (or text pairs).

    Args:
        model: a classifier (`BertClassifier`) with logits (B, num_classes) and
            optionally `label_names`; without them the labels are "0", "1", ...
        tokenizer: a `BertTokenizer`; None uses `model.tokenizer`.
        text_or_texts: a string or a list of strings, or records, a DataFrame or
            a `datasets.Dataset` with a "text" field (and a "pair" field for
            pairs). Texts longer than the model's limit are truncated with a
            warning, or read in windows (`long_texts`).
        pairs: None, or the second text of each pair: a string for a single
            string `text_or_texts`, else a list as long as it.
        batch_size: texts per forward pass (None: `inference_batch_size()`).
        engine, quantize: what runs the forward passes, "auto", "keras" or "onnxruntime",
            and with which weights, None or "int8" (`kbert.inference.inference_engine`).
        long_texts: "truncate" or "windows": a single text longer than the model's
            limit is cut into overlapping windows, and its probabilities are the
            softmax of the mean of its windows' logits
            (`kbert.preprocessing.long_text_windows`); pairs are truncated either
            way. None: the model's preprocessor's setting ("truncate" without one).

    Returns:
        A `Classification` for a string, a list of them for a list.

    Examples:

    >>> result = model.classify("A wonderful film.")
    >>> result.label, round(result.probability, 2)
    ('positive', 0.97)
    >>> model.classify(["Who sat?"], pairs=["The cat sat."])[0].probabilities
    {'entailment': 0.91, 'neutral': 0.06, 'contradiction': 0.03}
    >>> model.classify(long_article, long_texts="windows").label
    'business'
    """
    tokenizer = resolve_tokenizer(model, tokenizer)
    if long_texts is None:
        long_texts = getattr(getattr(model, "preprocessor", None), "long_texts", "truncate")
    model = engine_model(model, engine, quantize)
    texts, pairs, single = texts_and_pairs(text_or_texts, pairs, "text_or_texts")
    batch_size = inference_batch_size(batch_size)
    encodings, example_indices = encode_long_texts(
        tokenizer, texts, pairs, sequence_limit(model, tokenizer), long_texts
    )
    row_logits = [None] * len(encodings)
    for rows, logits in predict_in_batches(model, tokenizer, encodings, batch_size):
        for row, row_logit in zip(rows, logits[: len(rows)]):
            row_logits[row] = row_logit
    probabilities = softmax(pooled_logits(np.stack(row_logits), example_indices, len(texts)))
    label_names = getattr(model, "label_names", None)
    labels = label_names or [str(index) for index in range(probabilities.shape[-1])]
    best = probabilities.argmax(axis=-1)  # (texts,)
    results = [
        Classification(
            label=labels[text_best],
            probability=float(text_probabilities[text_best]),
            probabilities=dict(zip(labels, text_probabilities.tolist())),
        )
        for text_probabilities, text_best in zip(probabilities, best)
    ]
    return results[0] if single else results
