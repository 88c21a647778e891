"""A tokenizer as plain data: what the tokenizer files of every format describe."""

import dataclasses

# `kbert.tokenizer.BertTokenizer`'s settings and their defaults (a test checks them
# against its constructor): what a file that leaves a setting out means.
TOKENIZER_DEFAULTS = {
    "lowercase": True,
    "strip_accents": None,
    "tokenize_chinese_chars": True,
    "unk_token": "[UNK]",
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "pad_token": "[PAD]",
    "mask_token": "[MASK]",
    "max_length": 512,
}
SPECIAL_TOKENS = ("pad_token", "unk_token", "cls_token", "sep_token", "mask_token")
# BertTokenizer's WordPiece, which tokenizer files must agree with: `##` marks a piece
# that continues a word and, as in google-research/bert, a "word" longer than
# MAX_INPUT_CHARS_PER_WORD becomes one [UNK] rather than being split into pieces.
CONTINUING_SUBWORD_PREFIX = "##"
MAX_INPUT_CHARS_PER_WORD = 100


@dataclasses.dataclass(frozen=True)
class TokenizerData:
    """A WordPiece vocabulary and the tokenizer settings read with it.

    `BertTokenizer(data.vocabulary, **data.settings)` is the tokenizer.

    Attributes:
        vocabulary: the tokens, the token of id `i` at index `i`.
        settings: `BertTokenizer` constructor arguments (`lowercase`, `max_length`, the
            special tokens, ...) that the files set; the others take their defaults.
    """

    vocabulary: tuple
    settings: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "vocabulary", tuple(self.vocabulary))
        unknown = sorted(set(self.settings) - set(TOKENIZER_DEFAULTS))
        if unknown:
            raise ValueError(
                f"Unknown tokenizer settings {unknown}. Known: {sorted(TOKENIZER_DEFAULTS)}"
            )

    def setting(self, name):
        """The value of the setting `name`, its default when the files leave it out."""
        return self.settings.get(name, TOKENIZER_DEFAULTS[name])

    def all_settings(self):
        """Every setting, defaults filled in."""
        return {name: self.setting(name) for name in TOKENIZER_DEFAULTS}

    def replace(self, **settings):
        """A copy with some settings changed."""
        return TokenizerData(self.vocabulary, {**self.settings, **settings})

    def with_casing(self, lowercase):
        """A copy that lower-cases (True) or not; accent stripping follows unless set apart."""
        strip_accents = self.setting("strip_accents")
        if strip_accents == self.setting("lowercase"):
            strip_accents = None
        return self.replace(lowercase=lowercase, strip_accents=strip_accents)

    def token_id(self, token):
        """The id of `token`: its last line, as the tokenizer maps duplicates."""
        ids = {entry: index for index, entry in enumerate(self.vocabulary)}
        if token not in ids:
            raise ValueError(f"The vocabulary has no {token!r}.")
        return ids[token]
