"""BERT's tokenizer: word pieces with character offsets, segment-packed into BERT's inputs.

Word pieces come from `WordPieceTokenizer` (Hugging Face's Rust `tokenizers` library:
fast, parallel over a batch, exact offsets through lower-casing and accent
stripping). Truncation and segment packing into `[CLS] a [SEP] b [SEP]` happen in
kbert (`SegmentPacker`), so strategies and errors are ours. The file formats live in
`kbert.checkpoints.tokenizer_files`; reading and writing them, `TokenizerPresets`.
"""

from kbert.argument_checks import check_text
from kbert.argument_checks import check_texts
from kbert.checkpoints.tokenizer_data import CONTINUING_SUBWORD_PREFIX
from kbert.tokenizer.segment_packer import SegmentPacker
from kbert.tokenizer.segment_packer import check_max_length
from kbert.tokenizer.segment_packer import check_segment_packing
from kbert.tokenizer.tokenizer_presets import TokenizerPresets
from kbert.tokenizer.word_piece_tokenizer import WordPieceTokenizer


class BertTokenizer(TokenizerPresets, WordPieceTokenizer):
    """BERT's WordPiece tokenizer.

    Word pieces as `WordPieceTokenizer` makes them (BERT's basic tokenisation, then
    WordPiece; the special tokens are recognised when typed in a text). One text is
    packed as `[CLS] a [SEP]`, a pair as `[CLS] a [SEP] b [SEP]` with segment ids 0
    for the first part and 1 for `b [SEP]` (segment packing). Every token carries `[start, end)`
    character offsets into the caller's string.

    Args:
        vocabulary: path to a `vocab.txt` (one token per line, id = line
            number, counted from 0) or a list of token strings.
        lowercase: whether to lower-case the text ("uncased" models).
        strip_accents: whether to strip accents. `None` follows `lowercase`,
            as in the original BERT.
        tokenize_chinese_chars: whether to make every CJK character a word
            of its own.
        unk_token: the token for words WordPiece cannot split.
        cls_token: the token that starts every input sequence.
        sep_token: the token that ends each segment of an input sequence.
        pad_token: the token used by `pad()` to fill a batch.
        mask_token: the token masked-LM models predict.
        max_length: the default longest input sequence, special tokens
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
        check_max_length(max_length, minimum=2, reason="([CLS] a [SEP])")
        # In the order of `kbert.checkpoints.tokenizer_data.SPECIAL_TOKENS`.
        special_tokens = {
            "pad_token": pad_token,
            "unk_token": unk_token,
            "cls_token": cls_token,
            "sep_token": sep_token,
            "mask_token": mask_token,
        }
        super().__init__(
            vocabulary, special_tokens, lowercase, strip_accents, tokenize_chinese_chars
        )
        self.max_length = max_length
        self._packer = SegmentPacker(
            self.cls_token,
            self.cls_token_id,
            self.sep_token,
            self.sep_token_id,
            self.pad_token_id,
        )

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

    # Segment packing ---------------------------------------------------------

    def encode(self, text, pair=None, max_length=None, truncation="longest_first"):
        """Tokenizes, truncates and segment-packs one text or one pair of texts.

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
                tokenizers do; two texts of over `max_length * 100` characters
                each, tokenized only as far as truncation needs, count as equally
                long); `"only_second"` removes tokens from the end of
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
        check_text("text", text)
        if pair is not None:
            check_text("pair", pair)
        if pair == "":
            pair = None
        pairs = None if pair is None else [pair]
        return self.encode_batch([text], pairs, max_length=max_length, truncation=truncation)[0]

    def encode_batch(self, texts, pairs=None, max_length=None, truncation="longest_first"):
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
        texts = check_texts("texts", texts)
        if pairs is not None:
            pairs = check_texts("pairs", pairs)
            if len(pairs) != len(texts):
                raise ValueError(
                    "`pairs` must have one text per entry of `texts`. Received: "
                    f"len(texts)={len(texts)}, len(pairs)={len(pairs)}"
                )
        if max_length is None:
            max_length = self.max_length
        check_segment_packing(max_length, truncation, is_pair=pairs is not None)
        # Packing keeps `max_length` - 2 pieces (- 3 of a pair): one more tells truncation.
        if pairs is None:
            parts, _ = self._leading_pieces(texts, max_length - 1)
            return [
                self._packer.pack_segments(first, None, max_length, truncation) for first in parts
            ]
        firsts, seconds = self._leading_pair_pieces(texts, pairs, max_length - 2)
        return [
            self._packer.pack_segments(first, second, max_length, truncation)
            for first, second in zip(firsts, seconds)
        ]

    def pack_segments(self, first, second=None, max_length=None, truncation="longest_first"):
        """Truncates and segment-packs tokenized texts: `[CLS] first [SEP] second [SEP]`.

        `encode()` is `tokenize_texts()` then `pack_segments()`; pack parts yourself
        to cut or combine them first (windows over a long context, a shortened
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
        >>> encoding = tokenizer.pack_segments(part, max_length=5)
        >>> encoding.tokens, encoding.word_ids.tolist()
        (['[CLS]', 'the', 'cat', '##s', '[SEP]'], [-1, 0, 1, 1, -1])
        """
        if max_length is None:
            max_length = self.max_length
        return self._packer.pack_segments(first, second, max_length, truncation)

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

    def __call__(self, texts, pairs=None, sequence_length=None, truncation="longest_first"):
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

    def __repr__(self):
        return (
            f"BertTokenizer(vocabulary_size={self.vocabulary_size}, "
            f"lowercase={self.lowercase}, max_length={self.max_length})"
        )


# Word pieces ------------------------------------------------------------------


def display_token(token):
    """A vocabulary token as it reads in text: `##ing` -> `ing`."""
    if token.startswith(CONTINUING_SUBWORD_PREFIX) and len(token) > len(CONTINUING_SUBWORD_PREFIX):
        return token[len(CONTINUING_SUBWORD_PREFIX) :]
    return token
