"""Text and text-pair classification: label probabilities for each input."""

from kbert.inference.model_io import inference_batch_size
from kbert.inference.model_io import predict_in_batches
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import sequence_limit
from kbert.inference.model_io import softmax
from kbert.inference.inference_engine import engine_model
from kbert.inference.results import Classification
from kbert.preprocessing.text_encoding import texts_and_pairs
from kbert.preprocessing.text_encoding import encode_texts


def classify(
    model,
    tokenizer,
    text_or_texts,
    pairs=None,
    batch_size=None,
    engine="auto",
    quantize=None,
):
    """Label probabilities for one or several texts (or text pairs).

    Args:
        model: a classifier (`BertClassifier`) with logits (B, num_classes) and
            optionally `label_names`; without them the labels are "0", "1", ...
        tokenizer: a `BertTokenizer`; None uses `model.tokenizer`.
        text_or_texts: a string or a list of strings, or records, a DataFrame or
            a `datasets.Dataset` with a "text" field (and a "pair" field for
            pairs). Texts longer than the model's limit are truncated with a
            warning.
        pairs: None, or the second text of each pair: a string for a single
            string `text_or_texts`, else a list as long as it.
        batch_size: texts per forward pass (None: `inference_batch_size()`).
        engine, quantize: what runs the forward passes, "auto", "keras" or "onnxruntime",
            and with which weights, None or "int8" (`kbert.inference.inference_engine`).

    Returns:
        A `Classification` for a string, a list of them for a list.

    Examples:

    >>> result = model.classify("A wonderful film.")
    >>> result.label, round(result.probability, 2)
    ('positive', 0.97)
    >>> model.classify(["Who sat?"], pairs=["The cat sat."])[0].probabilities
    {'entailment': 0.91, 'neutral': 0.06, 'contradiction': 0.03}
    """
    tokenizer = resolve_tokenizer(model, tokenizer)
    model = engine_model(model, engine, quantize)
    texts, pairs, single = texts_and_pairs(text_or_texts, pairs, "text_or_texts")
    batch_size = inference_batch_size(batch_size)
    encodings = encode_texts(tokenizer, texts, pairs, sequence_limit(model, tokenizer))
    label_names = getattr(model, "label_names", None)
    results = [None] * len(texts)
    for rows, logits in predict_in_batches(model, tokenizer, encodings, batch_size):
        probabilities = softmax(logits[: len(rows)])  # (B, C)
        labels = label_names or [str(index) for index in range(probabilities.shape[-1])]
        best = probabilities.argmax(axis=-1)
        for row, row_probabilities, row_best in zip(rows, probabilities, best):
            results[row] = Classification(
                label=labels[row_best],
                probability=float(row_probabilities[row_best]),
                probabilities=dict(zip(labels, row_probabilities.tolist())),
            )
    return results[0] if single else results
