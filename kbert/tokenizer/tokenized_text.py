"""One text's word pieces before segment packing: what `BertTokenizer.pack_segments` takes."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class TokenizedText:
    """The word pieces of one text, without `[CLS]` or `[SEP]`.

    `BertTokenizer.tokenize_texts` (or `tokenize_words`) makes these and
    `BertTokenizer.pack_segments` packs one or two of them into an `Encoding`. A slice
    (`part[start:end]`) is again a `TokenizedText`, so a long text can be cut
    into windows, or a question shortened, before segment packing.

    Args:
        token_ids: int32 array of shape `(N,)`, vocabulary ids.
        offsets: int32 array of shape `(N, 2)`; `[start, end)` character
            offsets of each piece into the text.
        word_ids: int32 array of shape `(N,)`; the index, counted from 0 in the
            text, of the word each piece belongs to. Words are what BERT's
            pre-tokenisation splits (at whitespace, punctuation and CJK
            characters; a special token typed in the text is a word of its
            own), or the caller's words for `tokenize_words`. A slice keeps
            the indices of the whole text.
        tokens: the `N` token strings.

    Examples:

    >>> (part,) = tokenizer.tokenize_texts(["The cats sat."])
    >>> part.tokens, part.word_ids.tolist()
    (['the', 'cat', '##s', 'sat', '.'], [0, 1, 1, 2, 3])
    >>> part[1:3].tokens
    ['cat', '##s']
    """

    token_ids: np.ndarray
    offsets: np.ndarray
    word_ids: np.ndarray
    tokens: list

    def __len__(self):
        return len(self.token_ids)

    def __getitem__(self, index):
        if not isinstance(index, slice) or index.step not in (None, 1):
            raise ValueError(
                "A TokenizedText is cut with a slice of step 1, such as "
                f"part[start:end]. Received: {index!r}"
            )
        return TokenizedText(
            token_ids=self.token_ids[index],
            offsets=self.offsets[index],
            word_ids=self.word_ids[index],
            tokens=self.tokens[index],
        )
