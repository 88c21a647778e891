"""Segment packing: tokenized texts into BERT inputs `[CLS] a [SEP] b [SEP]`, truncated, padded.

"Segment" as in segment ids: the one or two texts of one input. (Sequence packing,
several inputs in one row, is `kbert.pretraining.sequence_packer`.)
"""

import numpy as np

from kbert.tokenizer.encoding import Encoding
from kbert.tokenizer.tokenized_text import TokenizedText

TRUNCATION_STRATEGIES = ("longest_first", "only_second")


class SegmentPacker:
    """Packs one or two `TokenizedText`s into an `Encoding`, and encodings into a batch.

    The one place that adds `[CLS]` and `[SEP]`, truncates a text or a pair to
    `max_length`, and pads a batch. `BertTokenizer` owns one, built from its
    special tokens; use it through `BertTokenizer.pack_segments` and
    `BertTokenizer.pad`.

    Args:
        cls_token: the token that starts every packed sequence.
        cls_token_id: the id of `cls_token`.
        sep_token: the token that ends each part of a packed sequence.
        sep_token_id: the id of `sep_token`.
        pad_token_id: the id `pad` fills a batch with.
    """

    def __init__(self, cls_token, cls_token_id, sep_token, sep_token_id, pad_token_id):
        self.cls_token = cls_token
        self.cls_token_id = cls_token_id
        self.sep_token = sep_token
        self.sep_token_id = sep_token_id
        self.pad_token_id = pad_token_id

    def pack_segments(self, first, second, max_length, truncation):
        """Truncates the parts to fit `max_length` and packs them.

        Args:
            first: the `TokenizedText` of the first text.
            second: `None`, or the `TokenizedText` of the pair text.
            max_length: the longest result, special tokens included.
            truncation: as in `BertTokenizer.encode`.

        Returns:
            An `Encoding`.
        """
        check_segment_packing(max_length, truncation, is_pair=second is not None)
        _check_part("first", first)
        if second is not None:
            _check_part("second", second)
        first_length = len(first)
        second_length = 0 if second is None else len(second)
        keep_first, keep_second = _truncated_lengths(
            first_length, second_length, second is not None, max_length, truncation
        )
        parts = [(first[:keep_first], 0)]
        if second is not None:
            parts.append((second[:keep_second], 1))

        special = np.array([-1], dtype=np.int32)
        token_ids = [np.array([self.cls_token_id], dtype=np.int32)]
        segment_ids = [np.zeros(1, dtype=np.int32)]
        offsets = [np.zeros((1, 2), dtype=np.int32)]
        sequence_ids = [special]
        word_ids = [special]
        tokens = [self.cls_token]
        for part, segment in parts:
            token_ids.append(part.token_ids)
            token_ids.append(np.array([self.sep_token_id], dtype=np.int32))
            segment_ids.append(np.full(len(part) + 1, segment, dtype=np.int32))
            offsets.append(part.offsets)
            offsets.append(np.zeros((1, 2), dtype=np.int32))
            sequence_ids.append(np.full(len(part), segment, dtype=np.int32))
            sequence_ids.append(special)
            word_ids.append(part.word_ids)
            word_ids.append(special)
            tokens.extend(part.tokens)
            tokens.append(self.sep_token)
        return Encoding(
            token_ids=np.concatenate(token_ids),
            segment_ids=np.concatenate(segment_ids),
            offsets=np.concatenate(offsets),
            sequence_ids=np.concatenate(sequence_ids),
            word_ids=np.concatenate(word_ids),
            tokens=tokens,
            truncated=keep_first + keep_second < first_length + second_length,
        )

    def pad(self, encodings, sequence_length):
        """Pads encodings into dense `(B, sequence_length)` arrays.

        Args:
            encodings: a list of `Encoding` (or of anything with a length,
                `token_ids` and `segment_ids`).
            sequence_length: the padded length, or `None` for the longest.

        Returns:
            The dict of `BertTokenizer.pad`.
        """
        encodings = list(encodings)
        lengths = [len(encoding) for encoding in encodings]
        if sequence_length is None:
            sequence_length = max(lengths, default=0)
        elif (
            isinstance(sequence_length, bool)
            or not isinstance(sequence_length, (int, np.integer))
            or sequence_length < 0
        ):
            raise ValueError(
                "`sequence_length` must be None or a non-negative integer. "
                f"Received: sequence_length={sequence_length!r}"
            )
        batch_size = len(encodings)
        token_ids = np.full((batch_size, sequence_length), self.pad_token_id, dtype=np.int32)
        segment_ids = np.zeros((batch_size, sequence_length), dtype=np.int32)
        for row, (encoding, length) in enumerate(zip(encodings, lengths)):
            if length > sequence_length:
                raise ValueError(
                    f"Encoding {row} has {length} tokens, more than "
                    f"`sequence_length`. Encode with max_length={sequence_length} "
                    "to truncate it. "
                    f"Received: sequence_length={sequence_length}"
                )
            token_ids[row, :length] = encoding.token_ids
            segment_ids[row, :length] = encoding.segment_ids
        padding_mask = np.arange(sequence_length)[None, :] < np.asarray(
            lengths, dtype=np.int64
        ).reshape(batch_size, 1)
        return {
            "token_ids": token_ids,
            "segment_ids": segment_ids,
            "padding_mask": padding_mask,
        }


def check_segment_packing(max_length, truncation, is_pair):
    """Raises `ValueError` unless `max_length` and `truncation` can pack a text (or pair)."""
    if truncation not in TRUNCATION_STRATEGIES:
        raise ValueError(
            f"`truncation` must be one of {list(TRUNCATION_STRATEGIES)}. "
            f"Received: truncation={truncation!r}"
        )
    if is_pair:
        check_max_length(max_length, minimum=3, reason="for a pair ([CLS] a [SEP] b [SEP])")
    else:
        check_max_length(max_length, minimum=2, reason="for a single text ([CLS] a [SEP])")


def _check_part(name, part):
    if not isinstance(part, TokenizedText):
        raise ValueError(
            f"`{name}` must be a TokenizedText (from `tokenize_texts`). "
            f"Received: {name} of type {type(part).__name__}"
        )


def check_max_length(max_length, minimum, reason):
    if (
        isinstance(max_length, bool)
        or not isinstance(max_length, (int, np.integer))
        or max_length < minimum
    ):
        raise ValueError(
            f"`max_length` must be an integer >= {minimum} {reason}. "
            f"Received: max_length={max_length!r}"
        )


def _truncated_lengths(first_length, second_length, is_pair, max_length, truncation):
    """How many tokens of each part survive truncation to `max_length`."""
    budget = max_length - (3 if is_pair else 2)
    if first_length + second_length <= budget:
        return first_length, second_length
    if not is_pair:
        if truncation == "only_second":
            raise ValueError(
                "truncation='only_second' needs a pair text to truncate, but "
                f"the single text has {first_length} tokens and "
                f"max_length={max_length} leaves room for {budget}. Use "
                "truncation='longest_first' for single texts."
            )
        return budget, 0
    if truncation == "only_second":
        # As in the Rust tokenizers library, the pair text may be shortened
        # but not removed entirely: at least one of its tokens must remain.
        if first_length >= budget:
            raise ValueError(
                "truncation='only_second' cannot fit the first text: it has "
                f"{first_length} tokens, but max_length={max_length} leaves "
                f"room for {budget} tokens besides [CLS] and two [SEP], and at "
                "least one token of the pair text must remain. Raise "
                "`max_length` or use truncation='longest_first'. "
                f"Received: max_length={max_length}"
            )
        return first_length, budget - first_length
    # longest_first, as the Rust tokenizers library computes it (transformers'
    # fast tokenizers): the shorter part keeps up to half the budget, the
    # longer part the rest; on a tie the pair text counts as the longer one.
    shorter_keep = min(first_length, second_length, budget // 2)
    longer_keep = budget - shorter_keep
    if first_length > second_length:
        return longer_keep, shorter_keep
    return shorter_keep, longer_keep
