"""Text to word pieces and back: BERT's basic tokenisation and WordPiece, with offsets.

Normalisation, pre-tokenisation and WordPiece run in Hugging Face's Rust
`tokenizers` library (fast, parallel over a batch, exact offsets through
lower-casing and accent stripping). What BERT's inputs add to word pieces (segment
packing, truncation, padding, the files) is `BertTokenizer`'s.
"""

import tokenizers
from tokenizers import decoders
from tokenizers import models
from tokenizers import normalizers
from tokenizers import pre_tokenizers

from kbert.argument_checks import check_bool
from kbert.argument_checks import check_positive_int
from kbert.argument_checks import check_text
from kbert.argument_checks import check_texts
from kbert.checkpoints.tokenizer_data import CONTINUING_SUBWORD_PREFIX
from kbert.checkpoints.tokenizer_data import MAX_INPUT_CHARS_PER_WORD
from kbert.tokenizer.leading_pieces import leading_pair_pieces
from kbert.tokenizer.leading_pieces import leading_pieces
from kbert.tokenizer.leading_pieces import leading_word_pieces
from kbert.tokenizer.leading_pieces import tokenized_text
from kbert.tokenizer.leading_pieces import whole_word_pieces
from kbert.tokenizer.vocabulary import Vocabulary


class WordPieceTokenizer:
    """BERT's basic tokenisation and WordPiece over a vocabulary; the base of `BertTokenizer`.

    Text goes through BERT's basic tokenisation (remove control characters,
    U+0000 and U+FFFD; normalise whitespace; optionally lower-case and strip
    accents; split punctuation and CJK characters into their own words) and
    then greedy longest-match-first WordPiece, with `##` marking a piece that
    continues a word. Words longer than 100 characters become `[UNK]`. The
    special tokens are recognised when typed literally in the text (for
    example `"the [MASK] sat"`), before lower-casing.

    Args:
        vocabulary: path to a `vocab.txt` (one token per line, id = line
            number, counted from 0) or a list of token strings.
        special_tokens: dict `argument -> token` of the special tokens, each in
            the vocabulary ("unk_token" -> "[UNK]", ...); each becomes an attribute
            of that name. "unk_token" is the token of words WordPiece cannot split.
        lowercase: whether to lower-case the text ("uncased" models).
        strip_accents: whether to strip accents. `None` follows `lowercase`,
            as in the original BERT.
        tokenize_chinese_chars: whether to make every CJK character a word
            of its own.
    """

    def __init__(
        self,
        vocabulary,
        special_tokens,
        lowercase=True,
        strip_accents=None,
        tokenize_chinese_chars=True,
    ):
        check_bool("lowercase", lowercase)
        if strip_accents is not None:
            check_bool("strip_accents", strip_accents)
        check_bool("tokenize_chinese_chars", tokenize_chinese_chars)
        self.lowercase = lowercase
        self.strip_accents = strip_accents
        self.tokenize_chinese_chars = tokenize_chinese_chars
        for argument, token in special_tokens.items():
            setattr(self, argument, token)
        self._vocabulary = Vocabulary(vocabulary)
        self._vocabulary.check_special_tokens(special_tokens)
        self._special_token_ids = frozenset(
            self._vocabulary.ids[token] for token in special_tokens.values()
        )
        # A special token typed in a text is matched in it; a cut closer than this to
        # one may split it (see `kbert.tokenizer.leading_pieces`).
        self._special_token_margin = max(len(token) for token in special_tokens.values())
        self._tokenizer = _word_piece_pipeline(
            self._vocabulary.ids,
            self.unk_token,
            list(special_tokens.values()),
            {
                "lowercase": lowercase,
                "strip_accents": strip_accents,
                "tokenize_chinese_chars": tokenize_chinese_chars,
            },
        )

    # Vocabulary --------------------------------------------------------------

    @property
    def vocabulary_size(self):
        """The number of ids, i.e. the number of lines of `vocab.txt`."""
        return len(self._vocabulary)

    @property
    def vocabulary(self):
        """A copy of the vocabulary as a list; the token of id `i` is at `i`."""
        return list(self._vocabulary.tokens)

    def token_to_id(self, token):
        """Returns the id of `token`; raises `ValueError` if it has none."""
        return self._vocabulary.token_to_id(token)

    def id_to_token(self, id):
        """Returns the token of `id`; raises `ValueError` if out of range."""
        return self._vocabulary.id_to_token(id)

    @property
    def cls_token_id(self):
        return self._vocabulary.ids[self.cls_token]

    @property
    def sep_token_id(self):
        return self._vocabulary.ids[self.sep_token]

    @property
    def pad_token_id(self):
        return self._vocabulary.ids[self.pad_token]

    @property
    def mask_token_id(self):
        return self._vocabulary.ids[self.mask_token]

    @property
    def unk_token_id(self):
        return self._vocabulary.ids[self.unk_token]

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
        check_text("text", text)
        return self._tokenizer.encode(text, add_special_tokens=False).tokens

    def tokenize_texts(self, texts, max_pieces=None):
        """Splits texts into word pieces with offsets and word ids, for `pack_segments()`.

        Word-piece splitting of the whole batch runs in parallel in Rust.

        Args:
            texts: a list of strings.
            max_pieces: None tokenizes every text whole. A number: a text longer than
                `max_pieces * 100` characters is tokenized only as far as its first
                `max_pieces` pieces need (whatever its length), and gives exactly those
                when it has more; other texts come whole.

        Returns:
            A list of `TokenizedText`, one per text, without `[CLS]`/`[SEP]`.

        Examples:

        >>> question, context = tokenizer.tokenize_texts(["Who sat?", "The cat sat."])
        >>> tokenizer.pack_segments(question, context[:2]).tokens
        ['[CLS]', 'who', 'sat', '?', '[SEP]', 'the', 'cat', '[SEP]']
        """
        texts = check_texts("texts", texts)
        if max_pieces is None:
            return self._tokenized(texts)
        return self._leading_pieces(texts, check_positive_int("max_pieces", max_pieces))[0]

    def tokenize_words(self, examples, max_pieces=None):
        """Splits texts given as words (as CoNLL files hold them) into word pieces.

        As transformers' `is_split_into_words=True`: each given word is
        tokenized as BERT tokenizes a word of a text (one given word may become
        several of BERT's words, such as `"don't"`), and `word_ids` are the
        indices of the given words. Offsets point into the words joined with
        single spaces.

        Args:
            examples: a list of examples, each a list of word strings.
            max_pieces: None tokenizes every word. A number: an example longer than
                `max_pieces * 100` characters is tokenized only as far as its first
                `max_pieces` pieces need, and gives exactly those when it has more.

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
        examples = [
            check_texts(f"examples[{index}]", words) for index, words in enumerate(examples)
        ]
        if max_pieces is None:
            return whole_word_pieces(self._tokenizer, examples)
        max_pieces = check_positive_int("max_pieces", max_pieces)
        return leading_word_pieces(
            self._tokenizer, examples, max_pieces, self._special_token_margin
        )

    def _tokenized(self, texts):
        """The `TokenizedText` of each text, split in parallel in Rust."""
        encodings = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        return [tokenized_text(encoding) for encoding in encodings]

    def _leading_pieces(self, texts, max_pieces):
        """`(parts, cut)` of `kbert.tokenizer.leading_pieces.leading_pieces`."""
        return leading_pieces(self._tokenizer, texts, max_pieces, self._special_token_margin)

    def _leading_pair_pieces(self, texts, pairs, max_pieces):
        """`(firsts, seconds)` of `kbert.tokenizer.leading_pieces.leading_pair_pieces`."""
        return leading_pair_pieces(
            self._tokenizer, texts, pairs, max_pieces, self._special_token_margin
        )

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
        token_ids = self._vocabulary.check_token_ids(token_ids)
        tokens = [
            self._vocabulary.tokens[token_id]
            for token_id in token_ids.tolist()
            if not (skip_special_tokens and token_id in self._special_token_ids)
        ]
        return self._tokenizer.decoder.decode(tokens)


def _word_piece_pipeline(token_ids, unk_token, special_tokens, normalization):
    """The Rust tokenizer: normalise, split into words, split words into pieces.

    Args:
        token_ids: dict `token -> id` of the vocabulary.
        unk_token: the token of words WordPiece cannot split.
        special_tokens: the special token strings, recognised when typed in a text.
        normalization: dict with `lowercase`, `strip_accents` and
            `tokenize_chinese_chars` (as `BertTokenizer` takes them).

    Returns:
        A `tokenizers.Tokenizer`.
    """
    tokenizer = tokenizers.Tokenizer(
        models.WordPiece(
            token_ids,
            unk_token=unk_token,
            max_input_chars_per_word=MAX_INPUT_CHARS_PER_WORD,
            continuing_subword_prefix=CONTINUING_SUBWORD_PREFIX,
        )
    )
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True,
        handle_chinese_chars=normalization["tokenize_chinese_chars"],
        strip_accents=normalization["strip_accents"],
        lowercase=normalization["lowercase"],
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece(prefix=CONTINUING_SUBWORD_PREFIX, cleanup=True)
    # normalized=False: "[MASK]" is matched in the raw text, before
    # lower-casing could turn it into "[mask]".
    tokenizer.add_special_tokens(
        [tokenizers.AddedToken(token, special=True, normalized=False) for token in special_tokens]
    )
    return tokenizer
