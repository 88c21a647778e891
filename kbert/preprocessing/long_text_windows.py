"""Texts longer than the model: truncated (with a warning), or read in overlapping windows.

A classifier reads at most `max_length` tokens, `[CLS] text [SEP]`. With
`long_texts="windows"`, a single text with more than `max_length - 2` word pieces is
tokenized whole and cut into windows of `max_length - 2` pieces that overlap by
`WINDOW_OVERLAP` pieces (at most half a window), each packed `[CLS] window [SEP]`; the
last window ends at the text's end and may be shorter. The text's logits are the mean
of its windows' logits (`pooled_logits`). Text pairs are always truncated (with the
warning): which of the two texts to window is the task's choice, not the reader's.

Examples:

>>> window_spans(1000, 510)
[(0, 510), (382, 892), (764, 1000)]
>>> encodings, example_indices = encode_long_texts(tokenizer, texts, None, 512, "windows")
>>> logits = pooled_logits(window_logits, example_indices)   # (texts, classes)
"""

import math

import numpy as np

from kbert.argument_checks import check_integer
from kbert.data.question_windowing import QuestionWindowing
from kbert.preprocessing.text_encoding import encode_texts

LONG_TEXT_CHOICES = ("truncate", "windows")

# Word pieces two consecutive windows share: the 128 tokens of BERT's QA document
# stride (`QuestionWindowing.doc_stride`'s default), here the overlap. Capped at half a
# window, so a short window still moves on by at least half its length.
WINDOW_OVERLAP = QuestionWindowing.doc_stride


def check_long_texts(long_texts):
    """`long_texts` if it is one of `LONG_TEXT_CHOICES`, else a ValueError naming it."""
    if not isinstance(long_texts, str) or long_texts not in LONG_TEXT_CHOICES:
        raise ValueError(
            f"`long_texts` must be one of {LONG_TEXT_CHOICES}. Received: long_texts={long_texts!r}"
        )
    return long_texts


def window_spans(num_pieces, window_length, overlap=WINDOW_OVERLAP):
    """`[(start, end), ...]`: the word pieces of each window of a text.

    Args:
        num_pieces: the text's word pieces.
        window_length: the most pieces a window holds (`max_length - 2`).
        overlap: pieces shared by consecutive windows, capped at `window_length // 2`.

    Returns:
        One span for a text that fits one window; else windows starting every
        `window_length - overlap` pieces until one reaches the end.
    """
    num_pieces = check_integer("num_pieces", num_pieces, 0)
    window_length = check_integer("window_length", window_length, 1)
    overlap = min(check_integer("overlap", overlap, 0), window_length // 2)
    step = window_length - overlap
    count = 1 + math.ceil(max(num_pieces - window_length, 0) / step)
    return [(index * step, min(index * step + window_length, num_pieces)) for index in range(count)]


def encode_long_texts(tokenizer, texts, pairs, max_length, long_texts):
    """`(encodings, example_indices)`: one encoding per text, or per window of a long one.

    Args:
        tokenizer: a `BertTokenizer`.
        texts: a list of strings.
        pairs: None, or the second texts (pairs are truncated whatever `long_texts`).
        max_length: the longest encoding, `[CLS]` and `[SEP]` included.
        long_texts: "truncate" (longer texts are cut, with a warning) or "windows".

    Returns:
        The encodings in text order (a text's windows in reading order), and an int64
        array with the index of the text each encoding came from.
    """
    if check_long_texts(long_texts) == "truncate" or pairs is not None:
        encodings = encode_texts(tokenizer, texts, pairs, max_length)
        return encodings, np.arange(len(encodings), dtype=np.int64)
    # Short texts come from one fast batch; only the long ones are tokenized whole.
    encodings = tokenizer.encode_batch(texts, max_length=max_length)
    long_rows = [index for index, encoding in enumerate(encodings) if encoding.truncated]
    parts = dict(zip(long_rows, tokenizer.tokenize_texts([texts[row] for row in long_rows])))
    rows, example_indices = [], []
    for index, encoding in enumerate(encodings):
        if index not in parts:
            rows.append(encoding)
            example_indices.append(index)
            continue
        part = parts[index]
        for start, end in window_spans(len(part), max_length - 2):
            rows.append(tokenizer.pack_segments(part[start:end], max_length=max_length))
            example_indices.append(index)
    return rows, np.asarray(example_indices, dtype=np.int64)


def pooled_logits(window_logits, example_indices, num_examples=None):
    """The mean of each example's window logits: `(examples, classes)` float32.

    Args:
        window_logits: `(rows, classes)` logits, one row per window.
        example_indices: the example each row belongs to (`encode_long_texts`').
        num_examples: the number of examples (default: the largest index + 1).
    """
    window_logits = np.asarray(window_logits, dtype=np.float32)
    example_indices = np.asarray(example_indices, dtype=np.int64)
    if num_examples is None:
        num_examples = int(example_indices.max()) + 1 if len(example_indices) else 0
    sums = np.zeros((num_examples,) + window_logits.shape[1:], dtype=np.float32)
    np.add.at(sums, example_indices, window_logits)
    counts = np.bincount(example_indices, minlength=num_examples).astype(np.float32)
    return sums / np.maximum(counts, 1).reshape((-1,) + (1,) * (window_logits.ndim - 1))
