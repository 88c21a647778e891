"""The result of encoding one text, or one pair of texts, with `BertTokenizer`."""

from dataclasses import dataclass
from dataclasses import fields

import numpy as np


@dataclass(frozen=True, eq=False)
class Encoding:
    """One segment-packed BERT input: `[CLS] a [SEP]` or `[CLS] a [SEP] b [SEP]`.

    Every array has one row per token, `L` rows in all. Offsets point into the
    string the caller passed in (the first text for `sequence_ids == 0`, the
    pair text for `sequence_ids == 1`), so `text[start:end]` is the span a
    token came from, whatever lower-casing or accent stripping did to it.

    Args:
        token_ids: int32 array of shape `(L,)`, vocabulary ids.
        segment_ids: int32 array of shape `(L,)`; 0 for `[CLS] a [SEP]`,
            1 for `b [SEP]`.
        offsets: int32 array of shape `(L, 2)`; `[start, end)` character
            offsets into the source string of each token, `(0, 0)` for the
            `[CLS]` and `[SEP]` tokens added by segment packing.
        sequence_ids: int32 array of shape `(L,)`; 0 for tokens of the first
            text, 1 for tokens of the pair text, -1 for the added `[CLS]` and
            `[SEP]` tokens. A special token typed literally in the text (such
            as `"[MASK]"`) belongs to its text and keeps its real offsets.
        word_ids: int32 array of shape `(L,)`; for each token of a text, the
            index of its word within that text (counted from 0 in each text,
            as transformers' `word_ids()`), -1 for the added `[CLS]` and
            `[SEP]`. See `TokenizedText.word_ids` for what a word is.
        tokens: the `L` token strings.
        truncated: whether truncation removed tokens to fit `max_length`.

    Examples:

    >>> encoding = tokenizer.encode("The cat sat.")
    >>> encoding.tokens
    ['[CLS]', 'the', 'cat', 'sat', '.', '[SEP]']
    >>> encoding.offsets[1].tolist()
    [0, 3]
    >>> tokenizer.encode("The cats sat.").word_ids.tolist()
    [-1, 0, 1, 1, 2, 3, -1]
    """

    token_ids: np.ndarray
    segment_ids: np.ndarray
    offsets: np.ndarray
    sequence_ids: np.ndarray
    word_ids: np.ndarray
    tokens: list
    truncated: bool

    def __len__(self):
        return len(self.token_ids)

    @property
    def special_tokens_mask(self):
        """A bool array `(L,)`, True on the `[CLS]` and `[SEP]` added by segment packing.

        As transformers' `return_special_tokens_mask=True`: a special token
        typed in the text (such as `"[MASK]"`) is part of the text, not added.
        """
        return self.sequence_ids < 0

    def __eq__(self, other):
        # The generated __eq__ would compare arrays with `==`, whose truth
        # value is ambiguous; compare them element-wise instead.
        if not isinstance(other, Encoding):
            return NotImplemented
        for field in fields(self):
            mine = getattr(self, field.name)
            theirs = getattr(other, field.name)
            if isinstance(mine, np.ndarray):
                if not np.array_equal(mine, theirs):
                    return False
            elif mine != theirs:
                return False
        return True
