"""Multiple choice: which candidate ending continues a context, with a probability each."""

import numpy as np

from kbert.inference.model_io import inference_batch_size
from kbert.inference.model_io import model_buckets
from kbert.inference.model_io import predict
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import sequence_limit
from kbert.inference.model_io import softmax
from kbert.inference.inference_engine import engine_model
from kbert.inference.results import Choice
from kbert.preprocessing.length_buckets import bucket_length
from kbert.preprocessing.data_parallel_rows import inference_rows
from kbert.preprocessing.length_buckets import pad_rows
from kbert.preprocessing.length_buckets import length_sorted_batches
from kbert.preprocessing.multiple_choice_preprocessor import parse_choice_inputs
from kbert.preprocessing.text_encoding import encode_texts


def choose(
    model, tokenizer, context, endings, batch_size=None, engine="auto", quantize=None
):
    """The most probable ending of a context, and the probability of every ending.

    Each (context, ending) pair is encoded as `[CLS] context [SEP] ending [SEP]`
    (pairs over the model's limit lose tokens from the longer segment first, with a
    warning) and scored; the scores of a context's endings are softmaxed.

    Args:
        model: a multiple-choice model (`BertMultipleChoice`) taking (B, C, L) inputs
            and giving logits (B, C).
        tokenizer: a `BertTokenizer`; None uses `model.tokenizer`.
        context: a string, or a list of strings for a batch.
        endings: for a string context, a list of at least two ending strings; for a
            list of contexts, one such list per context (their lengths may differ).
        batch_size: contexts per forward pass (None: `inference_batch_size()`).
        engine, quantize: what runs the forward passes, "auto", "keras" or "onnxruntime",
            and with which weights, None or "int8" (`kbert.inference.inference_engine`).

    Returns:
        A `Choice` for a string context, a list of them for a list.

    Examples:

    >>> result = model.choose("He put the cake in the oven", ["and baked it.", "and swam."])
    >>> result.index, result.ending
    (0, 'and baked it.')
    >>> [choice.index for choice in model.choose(["A", "B"], [["x", "y"], ["u", "v", "w"]])]
    [1, 2]
    """
    tokenizer = resolve_tokenizer(model, tokenizer)
    model = engine_model(model, engine, quantize)
    batch_size = inference_batch_size(batch_size)
    single = isinstance(context, str)
    fields = parse_choice_inputs({"context": context, "endings": endings})
    contexts, all_endings = fields["context"], fields["endings"]
    if len(contexts) != len(all_endings):
        raise ValueError(
            "`endings` must hold one list of endings per context. Received: "
            f"{len(contexts)} context(s) and {len(all_endings)} list(s) of endings"
        )
    limit = sequence_limit(model, tokenizer)
    encodings = [
        encode_texts(tokenizer, [text] * len(example), example, limit)
        for text, example in zip(contexts, all_endings)
    ]
    results = [None] * len(contexts)
    for rows, logits in _predict_by_choice_count(model, tokenizer, encodings, batch_size):
        for row, probabilities in zip(rows, softmax(logits[: len(rows)])):  # (C,)
            best = int(np.argmax(probabilities))
            results[row] = Choice(
                index=best,
                ending=all_endings[row][best],
                probability=float(probabilities[best]),
                probabilities=tuple(float(value) for value in probabilities),
                endings=tuple(all_endings[row]),
            )
    return results[0] if single else results


def _predict_by_choice_count(model, tokenizer, encodings, batch_size):
    """`(rows, logits)` per batch of examples with the same number of choices."""
    buckets = model_buckets(model)
    counts = np.array([len(example) for example in encodings])
    for count in np.unique(counts):
        members = np.flatnonzero(counts == count)
        lengths = [max(len(encoding) for encoding in encodings[row]) for row in members]
        for batch in length_sorted_batches(lengths, batch_size):
            rows = members[batch]
            flat = [encoding for row in rows for encoding in encodings[row]]
            length = bucket_length(max(len(encoding) for encoding in flat), buckets)
            padded = tokenizer.pad(flat, sequence_length=length)
            inputs = {
                name: np.asarray(values, dtype=np.int32).reshape(len(rows), int(count), length)
                for name, values in padded.items()
            }  # (B, C, L)
            yield rows, predict(model, pad_rows(inputs, inference_rows(len(rows))))
