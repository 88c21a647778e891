"""Words and their tags, for `BertTokenClassifier`."""

import logging

import numpy as np

from kbert.argument_checks import describe_value
from kbert.preprocessing.bert_preprocessor import BertPreprocessor
from kbert.preprocessing.bert_preprocessor import as_string_list
from kbert.preprocessing.bert_preprocessor import checked_labels
from kbert.preprocessing.bert_preprocessor import label_ids
from kbert.preprocessing.bucketed_dataset import IGNORED_LABEL
from kbert.preprocessing.record_fields import RecordFields
from kbert.preprocessing.task_features import TaskFeatures

logger = logging.getLogger("kbert.preprocessing")

# The tag given to a word the model did not see (cut off by truncation).
OUTSIDE_TAG = "O"


class TokenClassifierPreprocessor(BertPreprocessor):
    """One tag per word: the first sub-word of a word carries it, the others are ignored.

    Each word is tokenized as a word of a text (`BertTokenizer.tokenize_words`), so the
    word ids of the packed row tell which sub-words belong to which given word. The first
    sub-word of each word is labelled with the word's tag and every other token with -100
    (ignored by the loss), as in BERT's named-entity experiments.

    Inputs (`x`): a list of examples, each a list of words (as CoNLL files hold them) or
    a string, split on white space. Labels (`y`): for each example, one tag per word
    (tag strings when `label_names` is known, or tag ids). Records, DataFrames and
    `datasets.Dataset`s hold "words" (or "tokens") and the tags under "tags" (or
    "ner_tags"), or `y` names the tag column (`RecordFields`).

    Args:
        tokenizer: a `BertTokenizer`.
        sequence_length: the longest packed row; the words past it get no label (and
            are predicted "O"), with a warning.
        label_names: the tag strings, index = class id.
        num_classes: the number of tags (default: `len(label_names)`).

    Example:

    >>> preprocessor = TokenClassifierPreprocessor(tokenizer, label_names=["O", "B-PER"])
    >>> features = preprocessor.features([["Ada", "sat"]], [["B-PER", "O"]])
    >>> features.word_positions[0].tolist()
    [1, 2]
    """

    input_fields = ("words",)
    # Hugging Face's CoNLL sets name the columns "tokens" and "ner_tags".
    record_fields = RecordFields(
        inputs=("words",),
        aliases=(("words", ("tokens",)),),
        labels=("tags", "ner_tags"),
        text_lists=("words",),
    )

    def __init__(self, tokenizer, sequence_length=None, label_names=None, num_classes=None):
        super().__init__(tokenizer, sequence_length)
        self.label_names, self.num_classes = checked_labels(label_names, num_classes)

    def parse_inputs(self, x):
        if isinstance(x, dict):
            if set(x) != {"words"}:
                raise ValueError(f"A dict of inputs has the key 'words'. Received: {sorted(x)}")
            x = x["words"]
        if isinstance(x, str):
            x = [x]
        if isinstance(x, (bytes, np.ndarray)) or not hasattr(x, "__iter__"):
            raise ValueError(
                "`x` must be a list of examples, each a list of words or a string. "
                f"Received: {type(x).__name__}"
            )
        examples = []
        for index, example in enumerate(x):
            if isinstance(example, str):
                examples.append(example.split())
            else:
                examples.append(as_string_list(example, f"x[{index}]"))
        return {"words": examples}

    def features(self, x, y=None, sources=None):
        """`TaskFeatures` with `word_positions`: each word's first sub-word token.

        Args:
            x: the examples.
            y: their tags, or None.
            sources: optional descriptions of the examples for warnings ("line 12").
        """
        examples = self.parse(x)["words"]
        # One piece more than a row holds tells truncation; a long example is not
        # tokenized beyond it.
        parts = self.tokenizer.tokenize_words(examples, max_pieces=self.sequence_length - 1)
        encodings = [
            self.tokenizer.pack_segments(part, max_length=self.sequence_length) for part in parts
        ]
        tags = None if y is None else self._tag_ids(y, examples)
        labels, word_positions = [], []
        for index, (words, encoding) in enumerate(zip(examples, encodings)):
            word_ids = encoding.word_ids  # -1 on [CLS] and [SEP]
            previous = np.concatenate([[-1], word_ids[:-1]])
            first_pieces = np.flatnonzero((word_ids >= 0) & (word_ids != previous))
            positions = np.full(len(words), -1, dtype=np.int64)
            positions[word_ids[first_pieces]] = first_pieces
            word_positions.append(positions)
            if encoding.truncated:
                logger.warning(
                    "Sentence %s has more than %d tokens; it was truncated and its "
                    "last %d of %d words are not labelled (they are predicted %r).",
                    sources[index] if sources is not None else index,
                    self.sequence_length,
                    int(np.sum(positions < 0)),
                    len(words),
                    OUTSIDE_TAG,
                )
            if tags is not None:
                row = np.full(len(encoding), IGNORED_LABEL, dtype=np.int32)
                labelled = positions >= 0
                row[positions[labelled]] = tags[index][labelled]
                labels.append(row)
        return TaskFeatures(
            token_ids=[encoding.token_ids for encoding in encodings],
            segment_ids=[encoding.segment_ids for encoding in encodings],
            labels=None if tags is None else labels,
            example_indices=np.arange(len(examples)),
            word_positions=word_positions,
        )

    def _tag_ids(self, y, examples):
        if isinstance(y, (str, bytes)) or not hasattr(y, "__iter__"):
            raise ValueError(
                f"`y` must hold one list of tags per example. Received: {describe_value(y)}"
            )
        y = list(y)
        if len(y) != len(examples):
            raise ValueError(
                f"`y` must hold one list of tags per example ({len(examples)}). "
                f"Received: {len(y)}"
            )
        ids = []
        for index, (tags, words) in enumerate(zip(y, examples)):
            tags = tags.split() if isinstance(tags, str) else list(tags)
            if len(tags) != len(words):
                raise ValueError(
                    f"Example {index} has {len(words)} words but {len(tags)} tags."
                )
            ids.append(label_ids(tags, self.label_names, self.num_classes, name=f"y[{index}]"))
        return ids
