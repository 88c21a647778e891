"""A WordPiece vocabulary: its tokens in id order, checked, and the lookups both ways."""

import logging
import os

import numpy as np

from kbert.checkpoints.tokenizer_files import read_vocabulary

logger = logging.getLogger("kbert.tokenizer")


def check_ids_in_vocabulary(token_ids, vocabulary_size):
    """Raises `ValueError` unless every id of the integer array `token_ids` is in
    [0, `vocabulary_size`); the message shows the first id that is not."""
    outside = (token_ids < 0) | (token_ids >= vocabulary_size)
    if outside.any():
        raise ValueError(
            f"`token_ids` must be in [0, {vocabulary_size}). "
            f"Received: token id {int(token_ids[outside][0])}"
        )


class Vocabulary:
    """The tokens of a `vocab.txt` (or a list), id = position, counted from 0.

    As transformers' `load_vocab`: if a token is listed twice, the later line wins
    (with a warning). Real vocabularies occasionally carry such duplicates.

    Args:
        vocabulary: a path to a `vocab.txt` (one token per line) or a list of token
            strings.

    Examples:

    >>> vocabulary = Vocabulary(["[PAD]", "[UNK]", "the", "cat"])
    >>> len(vocabulary), vocabulary.token_to_id("cat"), vocabulary.id_to_token(2)
    (4, 3, 'the')
    """

    def __init__(self, vocabulary):
        self.tokens = _load_tokens(vocabulary)
        # Where the tokens came from, for messages: " of 'path/vocab.txt'" or "".
        self.source = (
            f" of {str(vocabulary)!r}" if isinstance(vocabulary, (str, os.PathLike)) else ""
        )
        self.ids = {token: index for index, token in enumerate(self.tokens)}
        if len(self.ids) != len(self.tokens):
            _warn_duplicates(self.tokens)

    def __len__(self):
        return len(self.tokens)

    def token_to_id(self, token):
        """Returns the id of `token`; raises `ValueError` if it has none."""
        try:
            return self.ids[token]
        except (KeyError, TypeError):
            raise ValueError(
                f"`token` is not in the vocabulary. Received: token={token!r}"
            ) from None

    def id_to_token(self, id):
        """Returns the token of `id`; raises `ValueError` if out of range."""
        return self.tokens[self.check_token_id(id)]

    def check_token_id(self, token_id):
        """`token_id` as an int; raises `ValueError` unless it is an id of this vocabulary."""
        if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)):
            raise ValueError(f"`id` must be an integer. Received: id={token_id!r}")
        if not 0 <= token_id < len(self):
            raise ValueError(f"`id` must be in [0, {len(self)}). Received: id={token_id}")
        return int(token_id)

    def check_token_ids(self, token_ids):
        """`token_ids` as a 1-D integer array; raises `ValueError` for any other ids."""
        token_ids = np.asarray(token_ids)
        if token_ids.ndim != 1 or not (
            token_ids.size == 0 or np.issubdtype(token_ids.dtype, np.integer)
        ):
            raise ValueError(
                "`token_ids` must be a 1-D sequence of integers. "
                f"Received: token_ids with shape {token_ids.shape} and dtype "
                f"{token_ids.dtype}"
            )
        check_ids_in_vocabulary(token_ids, len(self))
        return token_ids

    def check_special_tokens(self, special_tokens):
        """Raises `ValueError` unless each special token is a string of the vocabulary.

        Args:
            special_tokens: dict `argument name -> token` ("mask_token" -> "[MASK]").
        """
        for argument, token in special_tokens.items():
            if not isinstance(token, str) or not token:
                raise ValueError(
                    f"`{argument}` must be a non-empty string. Received: {argument}={token!r}"
                )
            if token not in self.ids:
                raise ValueError(
                    f"The vocabulary{self.source} has no {token!r} for `{argument}`. Add it "
                    f"to the vocabulary or pass the {argument} the vocabulary "
                    f"uses. Received: {argument}={token!r}"
                )


def _load_tokens(vocabulary):
    if isinstance(vocabulary, (str, os.PathLike)):
        return read_vocabulary(vocabulary)
    if isinstance(vocabulary, (list, tuple)):
        for index, token in enumerate(vocabulary):
            if not isinstance(token, str):
                raise ValueError(
                    "`vocabulary` must be a path or a list of strings. "
                    f"Received: vocabulary[{index}]={token!r} of type "
                    f"{type(token).__name__}"
                )
        return list(vocabulary)
    raise ValueError(
        "`vocabulary` must be a path to vocab.txt or a list of strings. "
        f"Received: vocabulary of type {type(vocabulary).__name__}"
    )


def _warn_duplicates(tokens):
    seen = set()
    duplicates = []
    for token in tokens:
        if token in seen:
            duplicates.append(token)
        seen.add(token)
    logger.warning(
        "The vocabulary lists %d token(s) more than once (e.g. %r); each maps "
        "to its last line, as in transformers.",
        len(duplicates),
        duplicates[:5],
    )
