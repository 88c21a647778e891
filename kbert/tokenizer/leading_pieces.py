"""A long text's first word pieces, without tokenizing the rest of it.

A model reads at most a few hundred pieces of a text, but a text may be megabytes long.
Tokenizing it whole costs time and memory in proportion to its length (a 10^6-character
text makes about 300,000 pieces); here only a prefix is tokenized, one that grows until
its first pieces are the text's own.

A prefix's pieces are the text's up to its last few words: BERT's normalisation works
character by character, words end at whitespace, punctuation and CJK characters, and a
special token typed in the text (`[MASK]`) is at most `margin` characters long. So
every piece of a word that is not the prefix's last word, and that ends at least
`margin` characters before the cut, is settled: the rest of the text cannot change it.
"""

import numpy as np

from kbert.tokenizer.tokenized_text import TokenizedText

# A text of at most this many characters per wanted piece is tokenized whole, as
# before (the longest word WordPiece splits is 100 characters, so this is roughly the
# most text a model's pieces can come from); longer texts are cut.
CHARACTERS_PER_PIECE = 100
# How much a prefix grows when its settled pieces are too few (whitespace, dropped
# characters, one long word).
PREFIX_GROWTH = 4


def leading_pieces(pipeline, texts, max_pieces, margin):
    """Each text's word pieces, tokenizing only a prefix of the long ones.

    Args:
        pipeline: the Rust `tokenizers.Tokenizer` (no special tokens added).
        texts: a list of strings.
        max_pieces: how many leading pieces of each text are wanted.
        margin: the length of the longest special token the pipeline matches in a text.

    Returns:
        `(parts, cut)`: a `TokenizedText` per text, and per text whether it was cut.
        A text of at most `max_pieces * CHARACTERS_PER_PIECE` characters, or one whose
        growing prefix reached its end, comes whole (all its pieces); a cut text gives
        exactly its first `max_pieces` pieces, with their offsets into the text.
    """
    parts = [None] * len(texts)
    cut = [False] * len(texts)
    prefix_lengths = [max_pieces * CHARACTERS_PER_PIECE] * len(texts)
    pending = list(range(len(texts)))
    while pending:
        prefixes = [texts[index][: prefix_lengths[index]] for index in pending]
        encodings = pipeline.encode_batch(prefixes, add_special_tokens=False)
        still_pending = []
        for index, prefix, encoding in zip(pending, prefixes, encodings):
            part = tokenized_text(encoding)
            if len(prefix) == len(texts[index]):
                parts[index] = part
            elif settled_pieces(part, len(prefix), margin) >= max_pieces:
                parts[index], cut[index] = part[:max_pieces], True
            else:
                prefix_lengths[index] *= PREFIX_GROWTH
                still_pending.append(index)
        pending = still_pending
    return parts, cut


def leading_pair_pieces(pipeline, texts, pairs, max_pieces, margin):
    """`leading_pieces` of the two texts of each pair: `(firsts, seconds)`.

    "longest_first" truncation asks which text of a pair is longer. A cut text has
    more pieces than it holds, so it is made to hold more than a whole partner for the
    answer to be right; two cut texts count as equally long.
    """
    count = len(texts)
    parts, cut = leading_pieces(pipeline, list(texts) + list(pairs), max_pieces, margin)
    short = {}  # index of a cut text -> the number of pieces of its whole partner
    for index in range(count):
        for mine, partner in ((index, index + count), (index + count, index)):
            if cut[mine] and not cut[partner] and len(parts[partner]) >= len(parts[mine]):
                short[mine] = len(parts[partner])
    if short:
        all_texts = list(texts) + list(pairs)
        longer, _ = leading_pieces(
            pipeline, [all_texts[index] for index in short], max(short.values()) + 1, margin
        )
        for index, part in zip(short, longer):
            parts[index] = part
    return parts[:count], parts[count:]


def settled_pieces(part, prefix_length, margin):
    """How many leading pieces of a prefix's `part` the rest of the text cannot change.

    Unsettled: every piece of the prefix's last word (the cut may split it), and every
    piece of a word that ends within `margin` characters of the cut (a special token
    across the cut would have split the text there).
    """
    if len(part) == 0:
        return 0
    word_ids = part.word_ids
    unsettled = (word_ids == word_ids[-1]) | (part.offsets[:, 1] > prefix_length - margin)
    first_unsettled = int(np.argmax(unsettled))  # the last piece is always unsettled
    # Words are runs of pieces: the run of the first unsettled piece goes with it.
    return int(np.argmax(word_ids == word_ids[first_unsettled]))


def tokenized_text(encoding, word_starts=None):
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


def leading_word_pieces(pipeline, examples, max_pieces, margin):
    """`leading_pieces` for texts given as words (`WordPieceTokenizer.tokenize_words`).

    Examples whose words, joined with single spaces, are at most `max_pieces *
    CHARACTERS_PER_PIECE` characters long are tokenized word by word, whole. A longer
    one is tokenized as its joined text, cut as `leading_pieces` cuts, and each piece
    given the index of the word it starts in: the same pieces, offsets and word ids, as
    BERT's words never cross the spaces that join the given words.

    Returns:
        A list of `TokenizedText`, offsets into the words joined with single spaces.
    """
    parts = [None] * len(examples)
    long_ones = [
        index
        for index, words in enumerate(examples)
        if sum(map(len, words)) + len(words) - 1 > max_pieces * CHARACTERS_PER_PIECE
    ]
    short_ones = sorted(set(range(len(examples))) - set(long_ones))
    for index, part in zip(short_ones, whole_word_pieces(pipeline, [examples[i] for i in short_ones])):
        parts[index] = part
    joined = [" ".join(examples[index]) for index in long_ones]
    cut_parts, _ = leading_pieces(pipeline, joined, max_pieces, margin)
    for index, part in zip(long_ones, cut_parts):
        starts = word_starts(examples[index])
        given_word_ids = np.searchsorted(starts, part.offsets[:, 0], side="right") - 1
        parts[index] = TokenizedText(
            token_ids=part.token_ids,
            offsets=part.offsets,
            word_ids=given_word_ids.astype(np.int32),
            tokens=part.tokens,
        )
    return parts


def whole_word_pieces(pipeline, examples):
    """The `TokenizedText` of each example given as words, every word tokenized."""
    if not examples:
        return []
    encodings = pipeline.encode_batch(examples, is_pretokenized=True, add_special_tokens=False)
    return [
        tokenized_text(encoding, word_starts(words))
        for words, encoding in zip(examples, encodings)
    ]


def word_starts(words):
    """Where each word starts in the words joined with single spaces (int32)."""
    lengths = np.array([len(word) for word in words], dtype=np.int64)
    return np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int32)
