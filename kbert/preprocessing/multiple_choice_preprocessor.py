"""Contexts, their candidate endings, and the index of the right one, for `BertMultipleChoice`."""

import numpy as np

from kbert.preprocessing.bert_preprocessor import BertPreprocessor
from kbert.preprocessing.bert_preprocessor import as_string_list
from kbert.preprocessing.bert_preprocessor import label_ids
from kbert.preprocessing.record_fields import RecordFields
from kbert.preprocessing.task_features import TaskFeatures
from kbert.preprocessing.text_encoding import encode_texts

# The fewest endings a multiple-choice example may have: one is no choice.
MIN_CHOICES = 2


class MultipleChoicePreprocessor(BertPreprocessor):
    """Packs `[CLS] context [SEP] ending [SEP]` once per ending; labels are ending indices.

    As in BERT's SWAG set-up (and transformers' `run_swag`), the context is the first
    segment and each ending the second; a pair longer than `sequence_length` loses
    tokens from its longer segment first (the tokenizer's "longest_first"), with a
    warning. One example's endings become one `(C, L)` block of the batch; a batch
    holds examples with the same number of endings.

    Inputs (`x`): a dict with "context" (a list of strings) and "endings" (a list with,
    for each context, a list of at least two ending strings); a single string context
    with one list of endings is one example. Labels (`y`): the index of the right
    ending of each example. Records, DataFrames and datasets hold "context", "endings"
    (a list per example) and the label under "label" (or "labels"), or `y` names the
    label column (`RecordFields`).

    Args:
        tokenizer: a `BertTokenizer`.
        sequence_length: the longest packed (context, ending) row.

    Example:

    >>> preprocessor = MultipleChoicePreprocessor(tokenizer)
    >>> features = preprocessor.features(
    ...     {"context": ["She opened the door."], "endings": [["and left.", "a fish."]]}, [0])
    >>> len(features.token_ids[0])  # one row per ending
    2
    """

    input_fields = ("context", "endings")
    record_fields = RecordFields(
        inputs=("context", "endings"), labels=("label", "labels"), text_lists=("endings",)
    )

    def parse_inputs(self, x):
        return parse_choice_inputs(x)

    def features(self, x, y=None):
        fields = self.parse(x)
        contexts, endings = fields["context"], fields["endings"]
        counts = [len(example_endings) for example_endings in endings]
        flat_contexts = [context for context, count in zip(contexts, counts) for _ in range(count)]
        flat_endings = [ending for example_endings in endings for ending in example_endings]
        encodings = encode_texts(self.tokenizer, flat_contexts, flat_endings, self.sequence_length)
        starts = np.concatenate([[0], np.cumsum(counts)])
        token_ids, segment_ids = [], []
        for start, end in zip(starts[:-1], starts[1:]):
            token_ids.append(tuple(encodings[row].token_ids for row in range(start, end)))
            segment_ids.append(tuple(encodings[row].segment_ids for row in range(start, end)))
        labels = None if y is None else choice_labels(y, counts)
        return TaskFeatures(
            token_ids=token_ids,
            segment_ids=segment_ids,
            labels=labels,
            example_indices=np.arange(len(contexts)),
        )


def choice_labels(y, counts):
    """The label of each example as an int32 array, checked against its number of endings."""
    if isinstance(y, (int, np.integer)):
        y = [y]
    labels = label_ids(list(y), None, None)
    if len(labels) != len(counts):
        raise ValueError(
            f"`y` must have one label per example ({len(counts)}). Received: {len(labels)}"
        )
    for index, (label, count) in enumerate(zip(labels, counts)):
        if label >= count:
            raise ValueError(
                f"`y[{index}]` must be the index of one of the example's {count} endings, in "
                f"[0, {count}). Received: {int(label)}"
            )
    return labels


def parse_choice_inputs(x):
    """`{"context": [...], "endings": [[...], ...]}` from any accepted form, checked."""
    if not isinstance(x, dict) or set(x) != {"context", "endings"}:
        received = sorted(x) if isinstance(x, dict) else type(x).__name__
        raise ValueError(
            "Multiple-choice inputs are a dict with the keys 'context' and 'endings'. "
            f"Received: {received}"
        )
    contexts, endings = x["context"], x["endings"]
    if isinstance(contexts, str):
        contexts, endings = [contexts], [endings]
    contexts = as_string_list(contexts, "x['context']")
    if isinstance(endings, (str, bytes, dict)) or not hasattr(endings, "__iter__"):
        raise ValueError(
            "`x['endings']` must hold a list of endings per context. "
            f"Received: {type(endings).__name__}"
        )
    endings = [
        as_string_list(example, f"x['endings'][{index}]") for index, example in enumerate(endings)
    ]
    for index, example in enumerate(endings):
        if len(example) < MIN_CHOICES:
            raise ValueError(
                f"`x['endings'][{index}]` must hold at least {MIN_CHOICES} endings. "
                f"Received: {len(example)}"
            )
    return {"context": contexts, "endings": endings}
