"""Segment packing: tokenized parts, `pack_segments`, word ids and special-token masks.

Word ids and special-token masks are compared with transformers' BertTokenizerFast
(`word_ids()`, `return_special_tokens_mask=True`) on the random texts of the inference
tests, singles and pairs, with and without truncation.
"""

import numpy as np
import pytest

from inference_helpers import VOCABULARY
from inference_helpers import random_text
from kbert.tokenizer import BertTokenizer
from kbert.tokenizer import TokenizedText

transformers = pytest.importorskip("transformers")

# (max_length, truncation) for singles and for pairs; None: no limit.
SINGLE_LIMITS = [(None, "longest_first"), (5, "longest_first"), (9, "longest_first")]
PAIR_LIMITS = SINGLE_LIMITS + [(16, "longest_first"), (16, "only_second"), (24, "only_second")]


@pytest.fixture(scope="module", params=[True, False], ids=["uncased", "cased"])
def tokenizers_pair(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("segment_packing") / "vocab.txt"
    path.write_text("".join(token + "\n" for token in VOCABULARY), encoding="utf-8")
    ours = BertTokenizer(path, lowercase=request.param)
    hf = transformers.BertTokenizerFast(vocab=str(path), do_lower_case=request.param)
    assert len(hf.get_vocab()) == len(VOCABULARY)
    return ours, hf


def fuzz_texts(count, seed):
    rng = np.random.default_rng(seed)
    return [random_text(rng, int(rng.integers(0, 14))) for _ in range(count)]


def hf_word_ids(encoding):
    return [-1 if word is None else word for word in encoding.word_ids()]


def assert_packed_as_hf(ours, hf, text, pair, max_length, truncation):
    options = {"truncation": truncation, "max_length": max_length} if max_length else {}
    expected = hf(text, pair, return_special_tokens_mask=True, **options)
    encoding = ours.encode(text, pair, max_length=max_length, truncation=truncation)
    context = f"{text!r} + {pair!r}, max_length={max_length}, {truncation}"
    assert encoding.token_ids.tolist() == expected["input_ids"], context
    assert encoding.word_ids.tolist() == hf_word_ids(expected), context
    assert encoding.special_tokens_mask.tolist() == expected["special_tokens_mask"], context
    assert encoding.word_ids.dtype == np.int32
    assert encoding.special_tokens_mask.dtype == bool


def test_word_ids_and_special_tokens_mask_match_huggingface(tokenizers_pair):
    ours, hf = tokenizers_pair
    texts = fuzz_texts(120, seed=0)
    pairs = fuzz_texts(120, seed=1)
    compared = truncated = 0
    for text, pair in zip(texts, pairs):
        for max_length, truncation in SINGLE_LIMITS:
            assert_packed_as_hf(ours, hf, text, None, max_length, truncation)
        if not pair:
            continue  # transformers drops an empty pair; `encode` does too (tested elsewhere)
        for max_length, truncation in PAIR_LIMITS:
            budget = (max_length or 10**6) - 3
            first_length = len(ours.tokenize(text))
            too_long = first_length + len(ours.tokenize(pair)) > budget
            if truncation == "only_second" and too_long and first_length >= budget:
                continue  # refused by both (tests/tokenizer/test_bert_tokenizer.py)
            assert_packed_as_hf(ours, hf, text, pair, max_length, truncation)
            compared += 1
            truncated += too_long
    assert compared > 300 and truncated > 100


def test_pack_segments_of_tokenized_parts_is_encode(tokenizers_pair):
    ours, _ = tokenizers_pair
    texts = fuzz_texts(60, seed=2)
    pairs = fuzz_texts(60, seed=3)
    parts = ours.tokenize_texts(texts + pairs)
    for text, pair, first, second in zip(texts, pairs, parts[:60], parts[60:]):
        assert ours.pack_segments(first) == ours.encode(text)
        assert ours.pack_segments(first, second, max_length=12) == ours.encode_batch(
            [text], [pair], max_length=12
        )[0]
        assert first.tokens == ours.tokenize(text)


def test_a_cut_part_keeps_its_offsets_and_word_ids(tokenizers_pair):
    ours, _ = tokenizers_pair
    question, context = ours.tokenize_texts(["Who sat?", "The cats sat on the mat."])
    window = context[1:4]
    assert isinstance(window, TokenizedText) and len(window) == 3
    encoding = ours.pack_segments(question, window)
    whole = ours.encode("Who sat?", "The cats sat on the mat.")
    in_window = slice(len(question) + 2, len(question) + 5)
    assert encoding.tokens[in_window] == whole.tokens[in_window.start + 1 : in_window.stop + 1]
    np.testing.assert_array_equal(encoding.word_ids[in_window], context.word_ids[1:4])
    np.testing.assert_array_equal(encoding.offsets[in_window], context.offsets[1:4])
    assert encoding.segment_ids.tolist() == [0] * (len(question) + 2) + [1] * 4
    assert not encoding.truncated
    with pytest.raises(ValueError, match="slice of step 1"):
        context[0]
    with pytest.raises(ValueError, match="slice of step 1"):
        context[::2]


def test_tokenize_words_numbers_the_given_words_as_huggingface(tokenizers_pair):
    ours, hf = tokenizers_pair
    rng = np.random.default_rng(4)
    fragments = [text for text in fuzz_texts(40, seed=5) if text] + ["don't", "New York", ""]
    examples = [
        [fragments[rng.integers(len(fragments))] for _ in range(rng.integers(0, 8))]
        for _ in range(80)
    ]
    for words, part in zip(examples, ours.tokenize_words(examples)):
        expected = hf(words, is_split_into_words=True, return_offsets_mapping=True)
        encoding = ours.pack_segments(part, max_length=10_000)
        assert encoding.token_ids.tolist() == expected["input_ids"], words
        assert encoding.word_ids.tolist() == hf_word_ids(expected), words
        # Offsets point into the words joined with spaces; transformers' are per word.
        lengths = np.array([len(word) for word in words], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
        in_words = part.offsets - starts[part.word_ids][:, None]
        assert in_words.tolist() == [list(span) for span in expected["offset_mapping"][1:-1]]
        joined = " ".join(words)
        for (start, end), word_id in zip(part.offsets, part.word_ids):
            assert joined[start:end] in words[word_id], words


def test_pack_segments_refuses_what_is_not_tokenized(tokenizers_pair):
    ours, _ = tokenizers_pair
    (part,) = ours.tokenize_texts(["the cat"])
    with pytest.raises(ValueError, match="`first` must be a TokenizedText.*str"):
        ours.pack_segments("the cat")
    with pytest.raises(ValueError, match="`second` must be a TokenizedText.*list"):
        ours.pack_segments(part, ["the"])
    with pytest.raises(ValueError, match="max_length=2"):
        ours.pack_segments(part, part, max_length=2)
    with pytest.raises(ValueError, match="`examples\\[1\\]` must be a list of strings"):
        ours.tokenize_words([["a"], "a b"])
