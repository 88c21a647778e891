"""BERT's WordPiece tokenizer, with character offsets into the caller's text.

Normalisation, pre-tokenisation and WordPiece run in Hugging Face's Rust
`tokenizers` library (fast, parallel over a batch, exact offsets through
lower-casing and accent stripping). Truncation and packing into
`[CLS] a [SEP] b [SEP]` happen in kbert (`Packer`), so strategies and errors
are ours.

Over 400 lines because `BertTokenizer` is one public class whose methods (encode,
pack, decode, word ids, the files) are documented with examples; the file formats it
reads live in `kbert.checkpoints.tokenizer_files`, packing in `packer`.
"""

import logging
import os
import pathlib

import numpy as np
import tokenizers
from tokenizers import decoders
from tokenizers import models
from tokenizers import normalizers
from tokenizers import pre_tokenizers

from kbert.checkpoints.tokenizer_data import CONTINUING_SUBWORD_PREFIX
from kbert.checkpoints.tokenizer_data import MAX_INPUT_CHARS_PER_WORD
from kbert.checkpoints.tokenizer_data import SPECIAL_TOKENS as _SPECIAL_TOKEN_ARGUMENTS
from kbert.checkpoints.tokenizer_data import TokenizerData
from kbert.checkpoints.tokenizer_files import read_tokenizer_folder
from kbert.checkpoints.tokenizer_files import read_tokenizer_json
from kbert.checkpoints.tokenizer_files import read_vocabulary
from kbert.checkpoints.tokenizer_files import write_tokenizer_folder
from kbert.tokenizer.packer import Packer
from kbert.tokenizer.packer import check_max_length
from kbert.tokenizer.packer import check_packing
from kbert.tokenizer.tokenized_text import TokenizedText

logger = logging.getLogger("kbert.tokenizer")


class BertTokenizer:
    """BERT's WordPiece tokenizer.

    Text goes through BERT's basic tokenisation (remove control characters,
    U+0000 and U+FFFD; normalise whitespace; optionally lower-case and strip
    accents; split punctuation and CJK characters into their own words) and
    then greedy longest-match-first WordPiece, with `##` marking a piece that
    continues a word. Words longer than 100 characters become `[UNK]`. The
    special tokens are recognised when typed literally in the text (for
    example `"the [MASK] sat"`), before lower-casing.

    One text is packed as `[CLS] a [SEP]`, a pair as `[CLS] a [SEP] b [SEP]`
    with segment ids 0 for the first part and 1 for `b [SEP]`. Every token
    carries `[start, end)` character offsets into the caller's string.

    Args:
        vocabulary: path to a `vocab.txt` (one token per line, id = line
            number, counted from 0) or a list of token strings.
        lowercase: whether to lower-case the text ("uncased" models).
        strip_accents: whether to strip accents. `None` follows `lowercase`,
            as in the original BERT.
        tokenize_chinese_chars: whether to make every CJK character a word
            of its own.
        unk_token: the token for words WordPiece cannot split.
        cls_token: the token that starts every packed sequence.
        sep_token: the token that ends each part of a packed sequence.
        pad_token: the token used by `pad()` to fill a batch.
        mask_token: the token masked-LM models predict.
        max_length: the default longest packed sequence, special tokens
            included; `encode(..., max_length=None)` truncates to it.

    Examples:

    >>> tokenizer = BertTokenizer("path/to/vocab.txt", lowercase=True)
    >>> tokenizer.tokenize("Unaffable café")
    ['una', '##ffa', '##ble', 'cafe']
    >>> encoding = tokenizer.encode("Who sat?", "The cat sat.")
    >>> encoding.segment_ids.tolist()
    [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    >>> batch = tokenizer(["a short text", "a longer second text"])
    >>> batch["token_ids"].shape
    (2, 6)
    """

    def __init__(
        self,
        vocabulary,
        lowercase=True,
        strip_accents=None,
        tokenize_chinese_chars=True,
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        mask_token="[MASK]",
        max_length=512,
    ):
        _check_bool("lowercase", lowercase)
        if strip_accents is not None:
            _check_bool("strip_accents", strip_accents)
        _check_bool("tokenize_chinese_chars", tokenize_chinese_chars)
        check_max_length(max_length, minimum=2, reason="([CLS] a [SEP])")

        self.lowercase = lowercase
        self.strip_accents = strip_accents
        self.tokenize_chinese_chars = tokenize_chinese_chars
        self.unk_token, self.cls_token, self.sep_token = unk_token, cls_token, sep_token
        self.pad_token, self.mask_token = pad_token, mask_token
        self.max_length = max_length

        self._vocabulary = _load_vocabulary(vocabulary)
        source = (
            f" of {str(vocabulary)!r}" if isinstance(vocabulary, (str, os.PathLike)) else ""
        )
        # As transformers' load_vocab: if a token is listed twice, the later
        # line wins. Real vocabularies occasionally carry such duplicates.
        self._token_to_id = {
            token: index for index, token in enumerate(self._vocabulary)
        }
        if len(self._token_to_id) != len(self._vocabulary):
            _warn_duplicates(self._vocabulary)

        for argument in _SPECIAL_TOKEN_ARGUMENTS:
            token = getattr(self, argument)
            if not isinstance(token, str) or not token:
                raise ValueError(
                    f"`{argument}` must be a non-empty string. "
                    f"Received: {argument}={token!r}"
                )
            if token not in self._token_to_id:
                raise ValueError(
                    f"The vocabulary{source} has no {token!r} for `{argument}`. Add it "
                    f"to the vocabulary or pass the {argument} the vocabulary "
                    f"uses. Received: {argument}={token!r}"
                )
        self._special_token_ids = frozenset(
            self._token_to_id[getattr(self, argument)]
            for argument in _SPECIAL_TOKEN_ARGUMENTS
        )
        self._tokenizer = self._build_rust_tokenizer()
        self._packer = Packer(
            self.cls_token,
            self.cls_token_id,
            self.sep_token,
            self.sep_token_id,
            self.pad_token_id,
        )

    def _build_rust_tokenizer(self):
        tokenizer = tokenizers.Tokenizer(
            models.WordPiece(
                self._token_to_id,
                unk_token=self.unk_token,
                max_input_chars_per_word=MAX_INPUT_CHARS_PER_WORD,
                continuing_subword_prefix=CONTINUING_SUBWORD_PREFIX,
            )
        )
        tokenizer.normalizer = normalizers.BertNormalizer(
            clean_text=True,
            handle_chinese_chars=self.tokenize_chinese_chars,
            strip_accents=self.strip_accents,
            lowercase=self.lowercase,
        )
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.decoder = decoders.WordPiece(
            prefix=CONTINUING_SUBWORD_PREFIX, cleanup=True
        )
        # normalized=False: "[MASK]" is matched in the raw text, before
        # lower-casing could turn it into "[mask]".
        tokenizer.add_special_tokens(
            [
                tokenizers.AddedToken(
                    getattr(self, argument), special=True, normalized=False
                )
                for argument in _SPECIAL_TOKEN_ARGUMENTS
            ]
        )
        return tokenizer

    # Construction from files ------------------------------------------------

    @classmethod
    def from_vocabulary_file(cls, path, **settings):
        """Creates a tokenizer from a `vocab.txt` file.

        Args:
            path: path to the vocabulary file, one token per line.
            **settings: other constructor arguments (`lowercase`, ...).

        Returns:
            A `BertTokenizer`.

        Examples:

        >>> tokenizer = BertTokenizer.from_vocabulary_file(
        ...     "vocab.txt", lowercase=False
        ... )
        """
        if not isinstance(path, (str, os.PathLike)):
            raise ValueError(
                "`path` must be a path to a vocabulary file. "
                f"Received: path={path!r}"
            )
        return cls(pathlib.Path(path), **settings)

    @classmethod
    def from_huggingface_tokenizer_json(cls, path):
        """Creates a tokenizer from a Hugging Face `tokenizer.json`.

        The file must hold a WordPiece model. Lower-casing, accent stripping
        and CJK splitting are read from its `BertNormalizer`; `[CLS]`/`[SEP]`
        from its post-processor; `max_length` and the remaining special tokens
        from a `tokenizer_config.json` beside it, when there is one (see
        `kbert.checkpoints.tokenizer_files.read_tokenizer_json`).

        Args:
            path: the `tokenizer.json` file, or a folder holding one.

        Returns:
            A `BertTokenizer`.

        Examples:

        >>> tokenizer = BertTokenizer.from_huggingface_tokenizer_json(
        ...     "bert-base-uncased/tokenizer.json"
        ... )
        """
        return cls.from_tokenizer_data(read_tokenizer_json(path))

    @classmethod
    def from_preset(cls, preset):
        """Creates a tokenizer from a preset folder or any model source.

        The folder holds `vocab.txt` plus `tokenizer_config.json` (as written
        by `save_to_preset()`, or by Hugging Face `save_pretrained()`), or,
        without `vocab.txt`, a Hugging Face `tokenizer.json`. A name or
        handle is resolved with `kbert.presets.resolve_preset` first.

        Args:
            preset: a folder path, or a preset or checkpoint name or handle.

        Returns:
            A `BertTokenizer`.

        Examples:

        >>> tokenizer = BertTokenizer.from_preset("path/to/preset")
        >>> tokenizer = BertTokenizer.from_preset("demo")
        """
        folder = pathlib.Path(preset).expanduser()
        if not folder.is_dir():
            # A name or handle: the tokenizer of the preset it resolves to. A folder is
            # read as it is (a Hugging Face folder's files are this class's own format).
            from kbert.presets import resolve_preset

            folder = pathlib.Path(resolve_preset(preset))
        return cls.from_tokenizer_data(read_tokenizer_folder(folder))

    @classmethod
    def from_tokenizer_data(cls, data):
        """Creates a tokenizer from a `kbert.checkpoints.TokenizerData`."""
        return cls(list(data.vocabulary), **data.settings)

    def tokenizer_data(self):
        """This tokenizer as plain data: its vocabulary and `get_config()`."""
        return TokenizerData(self._vocabulary, self.get_config())

    def save_to_preset(self, folder):
        """Writes `vocab.txt` and `tokenizer_config.json` into `folder`.

        Each file is written under a temporary name in the same folder and
        then renamed, so an interrupted save never leaves a half-written file.

        Args:
            folder: the preset folder; created if missing.

        Examples:

        >>> tokenizer.save_to_preset("presets/my_tokenizer")
        >>> BertTokenizer.from_preset("presets/my_tokenizer")
        """
        write_tokenizer_folder(self.tokenizer_data(), folder)

    def get_config(self):
        """Returns the settings (every constructor argument but the vocabulary).

        Returns:
            A JSON-serialisable dict.
        """
        return {
            "lowercase": self.lowercase,
            "strip_accents": self.strip_accents,
            "tokenize_chinese_chars": self.tokenize_chinese_chars,
            "unk_token": self.unk_token,
            "cls_token": self.cls_token,
            "sep_token": self.sep_token,
            "pad_token": self.pad_token,
            "mask_token": self.mask_token,
            "max_length": self.max_length,
        }

    # Vocabulary --------------------------------------------------------------

    @property
    def vocabulary_size(self):
        """The number of ids, i.e. the number of lines of `vocab.txt`."""
        return len(self._vocabulary)

    @property
    def vocabulary(self):
        """A copy of the vocabulary as a list; the token of id `i` is at `i`."""
        return list(self._vocabulary)

    def token_to_id(self, token):
        """Returns the id of `token`; raises `ValueError` if it has none."""
        try:
            return self._token_to_id[token]
        except (KeyError, TypeError):
            raise ValueError(
                f"`token` is not in the vocabulary. Received: token={token!r}"
            ) from None

    def id_to_token(self, id):
        """Returns the token of `id`; raises `ValueError` if out of range."""
        return self._vocabulary[self._check_token_id(id)]

    @property
    def cls_token_id(self):
        return self._token_to_id[self.cls_token]

    @property
    def sep_token_id(self):
        return self._token_to_id[self.sep_token]

    @property
    def pad_token_id(self):
        return self._token_to_id[self.pad_token]

    @property
    def mask_token_id(self):
        return self._token_to_id[self.mask_token]

    @property
    def unk_token_id(self):
        return self._token_to_id[self.unk_token]

    # Tokenisation ------------------------------------------------------------

    def tokenize(self, text):
        """Splits `text` into word pieces, without `[CLS]`/`[SEP]`.

        Args:
            text: a string.

        Returns:
            A list of token strings.

        Examples:

        >>> tokenizer.tokenize("The cats sat.")
        ['the', 'cat', '##s', 'sat', '.']
        """
        _check_text("text", text)
        return self._tokenizer.encode(text, add_special_tokens=False).tokens

    def encode(self, text, pair=None, max_length=None, truncation="longest_first"):
        """Tokenizes, truncates and packs one text or one pair of texts.

        Args:
            text: the first text.
            pair: an optional second text, packed as `[CLS] text [SEP] pair
                [SEP]`. An empty pair (`""`) is no pair, as in Hugging Face's
                `tokenizer(text, "")`: `[CLS] text [SEP]`.
            max_length: the longest result, special tokens included. `None`
                uses the tokenizer's `max_length`.
            truncation: `"longest_first"` removes tokens from the end of the
                longer part until the result fits (with equal lengths, the
                first part ends one token shorter, as Hugging Face's fast
                tokenizers do); `"only_second"` removes tokens from the end of
                the pair text only, and raises `ValueError` when that is not
                enough while keeping at least one token of the pair text (as
                Hugging Face does) or when there is no pair text.

        Returns:
            An `Encoding`.

        Examples:

        >>> encoding = tokenizer.encode("Who sat?", "The cat sat.")
        >>> encoding.tokens
        ['[CLS]', 'who', 'sat', '?', '[SEP]', 'the', 'cat', 'sat', '.', '[SEP]']
        >>> encoding.sequence_ids.tolist()
        [-1, 0, 0, 0, -1, 1, 1, 1, 1, -1]
        """
        _check_text("text", text)
        if pair is not None:
            _check_text("pair", pair)
        if pair == "":
            pair = None
        return self.encode_batch(
            [text],
            None if pair is None else [pair],
            max_length=max_length,
            truncation=truncation,
        )[0]

    def encode_batch(
        self, texts, pairs=None, max_length=None, truncation="longest_first"
    ):
        """Encodes many texts (or text pairs); the result equals `encode()`'s.

        Word-piece splitting of the whole batch runs in parallel in Rust. One
        exception, as in Hugging Face's fast tokenizers: an empty pair text in
        a batch still packs its `[SEP]` (`[CLS] a [SEP] [SEP]`), where
        `encode(a, "")` drops it, exactly as `tokenizer([a], [""])` and
        `tokenizer(a, "")` differ there.

        Args:
            texts: a list of strings.
            pairs: `None`, or a list of strings as long as `texts`.
            max_length: as in `encode()`.
            truncation: as in `encode()`.

        Returns:
            A list of `Encoding`, one per text.

        Examples:

        >>> encodings = tokenizer.encode_batch(["a cat", "a dog sat"])
        >>> [len(encoding) for encoding in encodings]
        [4, 5]
        """
        texts = _check_texts("texts", texts)
        if pairs is not None:
            pairs = _check_texts("pairs", pairs)
            if len(pairs) != len(texts):
                raise ValueError(
                    "`pairs` must have one text per entry of `texts`. Received: "
                    f"len(texts)={len(texts)}, len(pairs)={len(pairs)}"
                )
        if max_length is None:
            max_length = self.max_length
        check_packing(max_length, truncation, is_pair=pairs is not None)
        parts = self._tokenized(texts + (pairs or []))
        if pairs is None:
            return [self._packer.pack(first, None, max_length, truncation) for first in parts]
        return [
            self._packer.pack(first, second, max_length, truncation)
            for first, second in zip(parts[: len(texts)], parts[len(texts) :])
        ]

    def tokenize_texts(self, texts):
        """Splits texts into word pieces with offsets and word ids, for `pack()`.

        Word-piece splitting of the whole batch runs in parallel in Rust.

        Args:
            texts: a list of strings.

        Returns:
            A list of `TokenizedText`, one per text, without `[CLS]`/`[SEP]`.

        Examples:

        >>> question, context = tokenizer.tokenize_texts(["Who sat?", "The cat sat."])
        >>> tokenizer.pack(question, context[:2]).tokens
        ['[CLS]', 'who', 'sat', '?', '[SEP]', 'the', 'cat', '[SEP]']
        """
        return self._tokenized(_check_texts("texts", texts))

    def tokenize_words(self, examples):
        """Splits texts given as words (as CoNLL files hold them) into word pieces.

        As transformers' `is_split_into_words=True`: each given word is
        tokenized as BERT tokenizes a word of a text (one given word may become
        several of BERT's words, such as `"don't"`), and `word_ids` are the
        indices of the given words. Offsets point into the words joined with
        single spaces.

        Args:
            examples: a list of examples, each a list of word strings.

        Returns:
            A list of `TokenizedText`, one per example.

        Examples:

        >>> (part,) = tokenizer.tokenize_words([["Ada", "sat."]])
        >>> part.tokens, part.word_ids.tolist()
        (['ada', 'sat', '.'], [0, 1, 1])
        """
        if isinstance(examples, (str, bytes)) or not hasattr(examples, "__iter__"):
            raise ValueError(
                "`examples` must be a list of examples, each a list of words. "
                f"Received: examples of type {type(examples).__name__}"
            )
        examples = [_check_texts(f"examples[{index}]", words) for index, words in enumerate(examples)]
        encodings = self._tokenizer.encode_batch(
            examples, is_pretokenized=True, add_special_tokens=False
        )
        parts = []
        for words, encoding in zip(examples, encodings):
            # Word i starts after the previous words and one space after each.
            lengths = np.array([len(word) for word in words], dtype=np.int32)
            word_starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int32)
            parts.append(_tokenized_text(encoding, word_starts))
        return parts

    def pack(self, first, second=None, max_length=None, truncation="longest_first"):
        """Truncates and packs tokenized texts: `[CLS] first [SEP] second [SEP]`.

        `encode()` is `tokenize_texts()` then `pack()`; pack parts yourself to
        cut or combine them first (windows over a long context, a shortened
        question). Token rows keep their offsets and word ids.

        Args:
            first: a `TokenizedText`.
            second: `None`, or the `TokenizedText` of the pair text.
            max_length: as in `encode()`.
            truncation: as in `encode()`.

        Returns:
            An `Encoding`.

        Examples:

        >>> (part,) = tokenizer.tokenize_texts(["The cats sat."])
        >>> encoding = tokenizer.pack(part, max_length=5)
        >>> encoding.tokens, encoding.word_ids.tolist()
        (['[CLS]', 'the', 'cat', '##s', '[SEP]'], [-1, 0, 1, 1, -1])
        """
        if max_length is None:
            max_length = self.max_length
        return self._packer.pack(first, second, max_length, truncation)

    def _tokenized(self, texts):
        encodings = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        return [_tokenized_text(encoding) for encoding in encodings]

    def pad(self, encodings, sequence_length=None):
        """Pads encodings into dense `(B, sequence_length)` arrays.

        Args:
            encodings: a list of `Encoding`.
            sequence_length: the padded length. `None` pads to the longest
                encoding. An encoding longer than this is an error; encode
                with `max_length=sequence_length` to truncate instead.

        Returns:
            A dict of numpy arrays of shape `(B, sequence_length)`:
            `token_ids` (int32, `[PAD]` after the end), `segment_ids` (int32,
            0 after the end) and `padding_mask` (bool, True on real tokens).

        Examples:

        >>> batch = tokenizer.pad(tokenizer.encode_batch(["a", "a b c"]))
        >>> batch["padding_mask"].tolist()
        [[True, True, True, False, False], [True, True, True, True, True]]
        """
        return self._packer.pad(encodings, sequence_length)

    def __call__(
        self, texts, pairs=None, sequence_length=None, truncation="longest_first"
    ):
        """Encodes and pads a batch: the model-ready inputs.

        Args:
            texts: a string or a list of strings.
            pairs: `None`, or pair text(s) matching `texts`.
            sequence_length: pad (and truncate) every row to this length.
                `None` truncates to the tokenizer's `max_length` and pads to
                the longest row.
            truncation: as in `encode()`.

        Returns:
            The dict of `pad()`; a single string gives a batch of one.

        Examples:

        >>> inputs = tokenizer(["The cat sat."], sequence_length=16)
        >>> inputs["token_ids"].shape
        (1, 16)
        """
        if isinstance(texts, str):
            texts = [texts]
            if pairs == "":
                pairs = None  # As `encode`: one text with an empty pair is one text.
            if isinstance(pairs, str):
                pairs = [pairs]
        encodings = self.encode_batch(
            texts, pairs, max_length=sequence_length, truncation=truncation
        )
        return self.pad(encodings, sequence_length=sequence_length)

    def decode(self, token_ids, skip_special_tokens=True):
        """Turns ids back into text, joining `##` pieces to their words.

        Lower-casing and accent stripping cannot be undone, and spaces
        around punctuation are tidied as Hugging Face's decoder does.

        Args:
            token_ids: a sequence (or 1-D array) of ids.
            skip_special_tokens: whether to leave out `[CLS]`, `[SEP]`,
                `[PAD]`, `[MASK]` and `[UNK]`.

        Returns:
            A string.

        Examples:

        >>> tokenizer.decode(tokenizer.encode("The cats sat.").token_ids)
        'the cats sat.'
        """
        token_ids = np.asarray(token_ids)
        if token_ids.ndim != 1 or not (
            token_ids.size == 0 or np.issubdtype(token_ids.dtype, np.integer)
        ):
            raise ValueError(
                "`token_ids` must be a 1-D sequence of integers. "
                f"Received: token_ids with shape {token_ids.shape} and dtype "
                f"{token_ids.dtype}"
            )
        bad = (token_ids < 0) | (token_ids >= self.vocabulary_size)
        if bad.any():
            raise ValueError(
                f"`token_ids` must be in [0, {self.vocabulary_size}). "
                f"Received: token id {int(token_ids[bad][0])}"
            )
        tokens = [
            self._vocabulary[token_id]
            for token_id in token_ids.tolist()
            if not (skip_special_tokens and token_id in self._special_token_ids)
        ]
        return self._tokenizer.decoder.decode(tokens)

    def _check_token_id(self, token_id):
        if isinstance(token_id, bool) or not isinstance(
            token_id, (int, np.integer)
        ):
            raise ValueError(
                f"`id` must be an integer. Received: id={token_id!r}"
            )
        if not 0 <= token_id < self.vocabulary_size:
            raise ValueError(
                f"`id` must be in [0, {self.vocabulary_size}). "
                f"Received: id={token_id}"
            )
        return int(token_id)

    def __repr__(self):
        return (
            f"BertTokenizer(vocabulary_size={self.vocabulary_size}, "
            f"lowercase={self.lowercase}, max_length={self.max_length})"
        )


# Word pieces -----------------------------------------------------------------


def display_token(token):
    """A vocabulary token as it reads in text: `##ing` -> `ing`."""
    if token.startswith(CONTINUING_SUBWORD_PREFIX) and len(token) > len(CONTINUING_SUBWORD_PREFIX):
        return token[len(CONTINUING_SUBWORD_PREFIX) :]
    return token


def _tokenized_text(encoding, word_starts=None):
    """A Rust encoding made without special tokens, as a `TokenizedText`.

    `word_starts`: for pre-split words, where each word starts in the words
    joined with spaces; Rust's offsets are then within each word.
    """
    offsets = np.asarray(encoding.offsets, dtype=np.int32).reshape(-1, 2)
    word_ids = np.asarray(encoding.word_ids, dtype=np.int32)
    if word_starts is not None:
        offsets = offsets + word_starts[word_ids][:, None]
    return TokenizedText(
        token_ids=np.asarray(encoding.ids, dtype=np.int32),
        offsets=offsets,
        word_ids=word_ids,
        tokens=encoding.tokens,
    )


# Validation --------------------------------------------------------------------


def _check_bool(name, value):
    if not isinstance(value, bool):
        raise ValueError(f"`{name}` must be True or False. Received: {name}={value!r}")


def _check_text(name, text):
    if not isinstance(text, str):
        raise ValueError(
            f"`{name}` must be a string. Received: {name}={text!r} of type "
            f"{type(text).__name__}"
        )


def _check_texts(name, texts):
    if isinstance(texts, (str, bytes)) or not hasattr(texts, "__iter__"):
        raise ValueError(
            f"`{name}` must be a list of strings. Received: {name}={texts!r} of "
            f"type {type(texts).__name__}"
        )
    texts = list(texts)
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(
                f"`{name}` must be a list of strings. Received: {name}[{index}]="
                f"{text!r} of type {type(text).__name__}"
            )
    return texts


# Files -------------------------------------------------------------------------


def _load_vocabulary(vocabulary):
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


def _warn_duplicates(vocabulary):
    seen = set()
    duplicates = []
    for token in vocabulary:
        if token in seen:
            duplicates.append(token)
        seen.add(token)
    logger.warning(
        "The vocabulary lists %d token(s) more than once (e.g. %r); each maps "
        "to its last line, as in transformers.",
        len(duplicates),
        duplicates[:5],
    )
