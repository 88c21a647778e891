"""Token classification: entity spans with labels, scores and character offsets.

Labels are predicted per word from the probabilities of the word's first sub-word
(the token trained with the word's label, the rest being ignored in training), or
from the mean over its sub-words. Words are the tokenizer's words (`Encoding.word_ids`):
text split at whitespace, punctuation and CJK characters.
Word labels are decoded into entities as seqeval's default mode does
(`kbert.metrics.extract_entities`), so BIO/IOB2, IOB1 and BIOES tags all work and
`kbert tag` finds exactly the entities `entity_scores` counts.
"""

import numpy as np

from kbert.inference.model_io import inference_batch_size
from kbert.inference.model_io import predict_in_batches
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import sequence_limit
from kbert.inference.model_io import softmax
from kbert.inference.inference_engine import engine_model
from kbert.inference.results import EntitySpan
from kbert.metrics import extract_entities
from kbert.preprocessing.text_encoding import as_text_list
from kbert.preprocessing.text_encoding import encode_texts

AGGREGATIONS = ("first", "average")


def tag(
    model,
    tokenizer,
    text_or_texts,
    aggregation="first",
    batch_size=None,
    engine="auto",
    quantize=None,
):
    """Finds the entities of one or several texts.

    Args:
        model: a token classifier (`BertTokenClassifier`) with logits
            (B, L, num_classes) and `label_names` such as "O", "B-PER", "I-PER".
        tokenizer: a `BertTokenizer`; None uses `model.tokenizer`.
        text_or_texts: a string or a list of strings (or records, a DataFrame or
            a `datasets.Dataset` with a "text" field). Texts longer than the
            model's limit are truncated with a warning (entities come from the
            part that was kept).
        aggregation: how a word's label comes from its sub-words: "first" uses
            the first sub-word's probabilities (the convention of training),
            "average" the mean of its sub-words' probabilities.
        batch_size: texts per forward pass (None: `inference_batch_size()`).
        engine, quantize: what runs the forward passes, "auto", "keras" or "onnxruntime",
            and with which weights, None or "int8" (`kbert.inference.inference_engine`).

    Returns:
        For a string, a list of `EntitySpan` in text order; for a list of
        strings, a list of such lists. Each span satisfies
        `text[span.start:span.end] == span.text`; its score is the mean
        probability of its words' predicted labels.

    Examples:

    >>> spans = model.tag("Ada Lovelace visited Paris.")
    >>> [(span.label, span.text) for span in spans]
    [('PER', 'Ada Lovelace'), ('LOC', 'Paris')]
    """
    tokenizer = resolve_tokenizer(model, tokenizer)
    model = engine_model(model, engine, quantize)
    texts, single = as_text_list(text_or_texts, "text_or_texts")
    batch_size = inference_batch_size(batch_size)
    if aggregation not in AGGREGATIONS:
        raise ValueError(
            f"`aggregation` must be one of {list(AGGREGATIONS)}. "
            f"Received: aggregation={aggregation!r}"
        )
    label_names = getattr(model, "label_names", None)
    if not label_names:
        raise ValueError(
            f"`tag` needs the model's tag names (such as 'O', 'B-PER', 'I-PER') to find "
            f"entities, but {type(model).__name__}.label_names is {label_names!r}. Set "
            "`label_names` when building or fine-tuning the model."
        )
    encodings = encode_texts(tokenizer, texts, None, sequence_limit(model, tokenizer))
    results = [None] * len(texts)
    for rows, logits in predict_in_batches(model, tokenizer, encodings, batch_size):
        probabilities = softmax(logits)  # (B, L, C)
        for index, row in enumerate(rows):
            encoding = encodings[row]
            results[row] = _entities(
                texts[row],
                encoding,
                probabilities[index, : len(encoding)],
                label_names,
                aggregation,
            )
    return results[0] if single else results


def _entities(text, encoding, probabilities, label_names, aggregation):
    """The entity spans of one text from its token probabilities (L, C)."""
    token_indices = np.flatnonzero(encoding.sequence_ids == 0)
    if len(token_indices) == 0:
        return []
    word_ids = encoding.word_ids[token_indices]
    starts_word = np.concatenate([[True], word_ids[1:] != word_ids[:-1]])
    word_starts = np.flatnonzero(starts_word)  # into token_indices
    word_ends = np.append(word_starts[1:], len(token_indices))  # exclusive
    token_probabilities = probabilities[token_indices]
    if aggregation == "first":
        word_probabilities = token_probabilities[word_starts]
    else:
        sums = np.add.reduceat(token_probabilities, word_starts, axis=0)
        word_probabilities = sums / (word_ends - word_starts)[:, None]
    word_labels = word_probabilities.argmax(axis=-1)
    word_scores = word_probabilities.max(axis=-1)
    offsets = encoding.offsets[token_indices]
    word_start_chars = offsets[word_starts, 0]
    word_end_chars = offsets[word_ends - 1, 1]

    spans = []
    for label, first, stop in extract_entities([label_names[index] for index in word_labels]):
        start, end = int(word_start_chars[first]), int(word_end_chars[stop - 1])
        spans.append(
            EntitySpan(
                label=label,
                start=start,
                end=end,
                text=text[start:end],
                score=float(word_scores[first:stop].mean()),
            )
        )
    return spans
