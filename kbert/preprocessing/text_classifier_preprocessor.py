"""Texts or text pairs, and their labels, for `BertClassifier`."""

import dataclasses

from kbert.preprocessing.bert_preprocessor import BertPreprocessor
from kbert.preprocessing.bert_preprocessor import as_string_list
from kbert.preprocessing.bert_preprocessor import checked_labels
from kbert.preprocessing.bert_preprocessor import label_ids
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.preprocessing.length_buckets import INFERENCE_LENGTH_BUCKETS
from kbert.preprocessing.length_buckets import length_buckets
from kbert.preprocessing.long_text_windows import check_long_texts
from kbert.preprocessing.long_text_windows import encode_long_texts
from kbert.preprocessing.record_fields import RecordFields
from kbert.preprocessing.task_features import TaskFeatures


class TextClassifierPreprocessor(BertPreprocessor):
    """Segment-packs `[CLS] text [SEP]` or `[CLS] text [SEP] pair [SEP]`; labels become ids.

    Inputs (`x`): a list of strings; a pair of lists `(texts, pairs)`; a list of
    `(text, pair)` tuples; or a dict with "text" (and "pair") lists. A single string is
    one example. Labels (`y`): class ids, or label strings when `label_names` is known.
    Records, DataFrames and `datasets.Dataset`s hold "text" (and "pair") with the labels
    under "label" (or "labels"), or `y` names the label column (`RecordFields`).

    Args:
        tokenizer: a `BertTokenizer`.
        sequence_length: the longest packed row.
        label_names: the label strings, index = class id; None for ids only.
        num_classes: the number of classes (default: `len(label_names)`).
        long_texts: what becomes of a text longer than `sequence_length`: "truncate"
            (cut, with a warning) or "windows" (one row per overlapping window, see
            `kbert.preprocessing.long_text_windows`; for training each window carries
            its text's label). Text pairs are truncated either way.
            `BertClassifier`'s `predict` and `evaluate` and `classify` pool a text's
            windows (the mean of their logits).

    Example:

    >>> preprocessor = TextClassifierPreprocessor(tokenizer, label_names=["neg", "pos"])
    >>> features = preprocessor.features(["a good film", "a dull one"], ["pos", "neg"])
    >>> features.labels.tolist()
    [1, 0]
    >>> windows = TextClassifierPreprocessor(tokenizer, 128, long_texts="windows")
    >>> windows.features([long_text]).example_indices.tolist()   # three windows
    [0, 0, 0]
    """

    input_fields = ("text", "pair")
    record_fields = RecordFields(
        inputs=("text", "pair"), optional=("pair",), labels=("label", "labels")
    )

    def __init__(
        self,
        tokenizer,
        sequence_length=None,
        label_names=None,
        num_classes=None,
        long_texts="truncate",
    ):
        super().__init__(tokenizer, sequence_length)
        self.label_names, self.num_classes = checked_labels(label_names, num_classes)
        self.long_texts = check_long_texts(long_texts)

    def parse_inputs(self, x):
        return parse_text_inputs(x)

    def features(self, x, y=None):
        fields = self.parse(x)
        texts, pairs = fields["text"], fields["pair"]
        encodings, example_indices = encode_long_texts(
            self.tokenizer, texts, pairs, self.sequence_length, self.long_texts
        )
        labels = None
        if y is not None:
            if isinstance(y, str):
                y = [y]
            labels = label_ids(y, self.label_names, self.num_classes)
            if len(labels) != len(texts):
                raise ValueError(
                    f"`y` must have one label per text ({len(texts)}). Received: {len(labels)}"
                )
            labels = labels[example_indices]  # a window carries its text's label
        return TaskFeatures(
            token_ids=[encoding.token_ids for encoding in encodings],
            segment_ids=[encoding.segment_ids for encoding in encodings],
            labels=labels,
            example_indices=example_indices,
        )

    def window_rows(self, x, y=None, batch_size=DEFAULT_BATCH_SIZE, labelled=False):
        """`(dataset, features)`: the rows of `x` (windows, or whole texts) batched as
        `predict` batches them, and their `TaskFeatures`.

        `pooled_logits(outputs, features.example_indices)` turns the rows' logits into
        each text's (see `kbert.preprocessing.long_text_windows`).

        Args:
            x: raw inputs in any accepted form.
            y: labels, or None (or those inside a table, with `labelled`).
            batch_size: rows per batch.
            labelled: read labels (from `y` or the table) into `features.labels`;
                the dataset itself carries none.
        """
        features = self.task_features(x, y, predict=not labelled)
        dataset = self._make_dataset(
            dataclasses.replace(features, labels=None),
            batch_size=batch_size,
            buckets=length_buckets(self.sequence_length, INFERENCE_LENGTH_BUCKETS),
            shuffle=False,
            seed=0,
            sample_weights=None,
            length_sorted=True,
        )
        return dataset, features

    def get_config(self):
        return {**super().get_config(), "long_texts": self.long_texts}


def parse_text_inputs(x):
    """Texts or text pairs in any accepted form, as `{"text": [...], "pair": [...] | None}`."""
    if isinstance(x, str):
        return {"text": [x], "pair": None}
    if isinstance(x, dict):
        unknown = sorted(set(x) - {"text", "pair"})
        if unknown or "text" not in x:
            raise ValueError(
                "A dict of texts has the keys 'text' and optionally 'pair'. "
                f"Received: {sorted(x)}"
            )
        pairs = x.get("pair")
        return {
            "text": as_string_list(x["text"], "x['text']"),
            "pair": None if pairs is None else as_string_list(pairs, "x['pair']"),
        }
    if isinstance(x, tuple) and len(x) == 2 and not isinstance(x[0], str):
        return {"text": as_string_list(x[0], "x[0]"), "pair": as_string_list(x[1], "x[1]")}
    items = list(x) if hasattr(x, "__iter__") and not isinstance(x, bytes) else None
    if items and all(isinstance(item, (tuple, list)) and len(item) == 2 for item in items):
        return {
            "text": as_string_list([item[0] for item in items], "x[i][0]"),
            "pair": as_string_list([item[1] for item in items], "x[i][1]"),
        }
    return {"text": as_string_list(x, "x"), "pair": None}
