"""Trains a WordPiece vocabulary for `BertTokenizer` from text files."""

import logging
import os
import pathlib

import tokenizers
from tokenizers import models, normalizers, pre_tokenizers, trainers

from kbert.argument_checks import check_bool, check_integer
from kbert.tokenizer.bert_tokenizer import CONTINUING_SUBWORD_PREFIX, BertTokenizer

logger = logging.getLogger("kbert.pretraining")

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class VocabularyTrainer:
    """Learns a WordPiece vocabulary with BERT's text processing.

    Text goes through the same normaliser and pre-tokeniser as `BertTokenizer`
    (clean-up, optional lower-casing and accent stripping, punctuation and CJK
    characters split off), then the `tokenizers` library's `WordPieceTrainer` learns
    word pieces, `##` marking those that continue a word. The vocabulary starts with
    `[PAD] [UNK] [CLS] [SEP] [MASK]` (ids 0-4), then `num_unused_tokens` placeholders
    `[unused0]`, `[unused1]`, ... that can later be given a meaning without resizing
    the model, then the learned pieces.

    Args:
        vocabulary_size: the number of tokens wanted, special tokens included. A small
            corpus may yield fewer (every pair seen `min_frequency` times gets merged).
        lowercase: whether to lower-case the text (an "uncased" vocabulary).
        strip_accents: whether to strip accents; None follows `lowercase`, as BERT.
        tokenize_chinese_chars: whether every CJK character is a word of its own.
        min_frequency: how often a pair must occur to be merged into a piece.
        num_unused_tokens: how many `[unusedN]` placeholders to reserve.
        limit_alphabet: the most distinct characters kept; rarer ones become `[UNK]`.

    Examples:

    >>> tokenizer = VocabularyTrainer(vocabulary_size=8000).train(["corpus.txt"])
    >>> tokenizer.save_to_preset("my_vocabulary")  # vocab.txt, tokenizer_config.json
    """

    def __init__(
        self,
        vocabulary_size=30522,
        lowercase=True,
        strip_accents=None,
        tokenize_chinese_chars=True,
        min_frequency=2,
        num_unused_tokens=0,
        limit_alphabet=1000,
    ):
        for name, value, minimum in (
            ("min_frequency", min_frequency, 0),
            ("num_unused_tokens", num_unused_tokens, 0),
            ("limit_alphabet", limit_alphabet, 1),
        ):
            check_integer(name, value, minimum)
        smallest = len(SPECIAL_TOKENS) + num_unused_tokens + 1
        check_integer("vocabulary_size", vocabulary_size, smallest)
        check_bool("lowercase", lowercase)
        check_bool("tokenize_chinese_chars", tokenize_chinese_chars)
        if strip_accents is not None:
            check_bool("strip_accents", strip_accents)
        self.vocabulary_size = vocabulary_size
        self.lowercase = lowercase
        self.strip_accents = strip_accents
        self.tokenize_chinese_chars = tokenize_chinese_chars
        self.min_frequency = min_frequency
        self.num_unused_tokens = num_unused_tokens
        self.limit_alphabet = limit_alphabet

    @property
    def special_tokens(self):
        """The tokens that come first, in id order."""
        unused = [f"[unused{index}]" for index in range(self.num_unused_tokens)]
        return list(SPECIAL_TOKENS) + unused

    def train(self, paths):
        """Learns the vocabulary from UTF-8 text files.

        The files are read line by line by the Rust trainer (in parallel); their
        layout does not matter, only their words.

        Args:
            paths: a path or a list of paths.

        Returns:
            A `BertTokenizer` with the new vocabulary and this trainer's settings;
            `save_to_preset(folder)` writes its `vocab.txt` and
            `tokenizer_config.json`.
        """
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        paths = [pathlib.Path(path) for path in paths]
        if not paths:
            raise ValueError("`paths` must name at least one file. Received: paths=[]")
        for path in paths:
            if not path.is_file():
                raise ValueError(f"Input file not found: {path}")
        tokenizer = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tokenizer.normalizer = normalizers.BertNormalizer(
            clean_text=True,
            handle_chinese_chars=self.tokenize_chinese_chars,
            strip_accents=self.strip_accents,
            lowercase=self.lowercase,
        )
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(
            vocab_size=self.vocabulary_size,
            min_frequency=self.min_frequency,
            special_tokens=self.special_tokens,
            limit_alphabet=self.limit_alphabet,
            continuing_subword_prefix=CONTINUING_SUBWORD_PREFIX,
            show_progress=False,
        )
        try:
            tokenizer.train([str(path) for path in paths], trainer)
        except Exception as error:  # the Rust side raises plain Exceptions
            raise ValueError(f"Training the vocabulary failed: {error}") from None
        by_id = sorted(
            tokenizer.get_vocab(with_added_tokens=True).items(), key=lambda item: item[1]
        )
        vocabulary = [token for token, _ in by_id]
        if [index for _, index in by_id] != list(range(len(by_id))):
            raise ValueError("The trained vocabulary's ids are not 0..n-1; this is a bug.")
        if vocabulary[: len(self.special_tokens)] != self.special_tokens:
            raise ValueError(
                "The trained vocabulary does not start with the special tokens; this is a bug. "
                f"Received: {vocabulary[: len(self.special_tokens)]}"
            )
        if len(vocabulary) < self.vocabulary_size:
            logger.info(
                "The corpus yields %d tokens, fewer than the %d asked for.",
                len(vocabulary),
                self.vocabulary_size,
            )
        return BertTokenizer(
            vocabulary,
            lowercase=self.lowercase,
            strip_accents=self.strip_accents,
            tokenize_chinese_chars=self.tokenize_chinese_chars,
        )

    def get_config(self):
        return {
            "vocabulary_size": self.vocabulary_size,
            "lowercase": self.lowercase,
            "strip_accents": self.strip_accents,
            "tokenize_chinese_chars": self.tokenize_chinese_chars,
            "min_frequency": self.min_frequency,
            "num_unused_tokens": self.num_unused_tokens,
            "limit_alphabet": self.limit_alphabet,
        }
