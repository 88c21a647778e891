"""Acceptance tests for BertTokenizer: parity with transformers' fast BERT tokenizer."""

import json
import os
import random
import re

import numpy as np
import pytest
from tokenizers import normalizers
from tokenizers import pre_tokenizers

from kbert.tokenizer import BertTokenizer
from kbert.tokenizer import Encoding

transformers = pytest.importorskip("transformers")

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

SAMPLES = [
    "Hello, world! The café's naïve Ångström.",
    "Über Straße und Fußgängerübergänge; l'été à Paris — «déjà vu».",
    "中文字符 mixed with 日本語のテキスト and 한국어 텍스트.",
    "emoji 😀👍🏽 test 🎉! ❤️",
    "control\x00chars\there\u200bzero\x07bell\ufffdreplacement",
    "a" * 150 + " short",
    "word" * 30,
    "",
    "   \n\t ",
    "the [MASK] sat on the [MASK].",
    "[CLS] x [SEP]",
    "The [mask] is lower-case and [MASK]y sticks to a word",
    "multiple     spaces\n\nnewlines\r\nand\ttabs  ",
    "punctuation!!! ?? ... (brackets) [unused1] $100.00 #hash @at ¿qué? ¡sí!",
    "UNAFFABLE unaffable Unaffable unaffably",
    "İstanbul ǅemal ﬁnance Straße ΣΊΣΥΦΟΣ",
    "e\u0301 combining accents x\u0300\u0301\u0302",
    "Ａ full-width ＡＢＣ１２３",
    "مرحبا بالعالم שלום עולם",
    "สวัสดีครับ नमस्ते दुनिया",
    "The quick brown fox jumps over the lazy dog. The dog sleeps.",
]


def basic_words(text, lowercase, strip_accents=None):
    normalizer = normalizers.BertNormalizer(
        clean_text=True,
        handle_chinese_chars=True,
        strip_accents=strip_accents,
        lowercase=lowercase,
    )
    pieces = pre_tokenizers.BertPreTokenizer().pre_tokenize_str(
        normalizer.normalize_str(text)
    )
    return [word for word, _ in pieces]


def build_vocabulary():
    """BERT's layout ([PAD], [unused*], [UNK], [CLS], [SEP], [MASK]) plus pieces.

    About half of the words are whole tokens; every word also gets prefixes
    and `##` suffixes, and most characters a single-character piece, so
    WordPiece really splits words. A few characters are left out on purpose
    so some words become [UNK].
    """
    generator = random.Random(0)
    words = set()
    for text in SAMPLES:
        for lowercase in (True, False):
            words.update(basic_words(text, lowercase))
    words = sorted(words)
    left_out = {"😀", "ク", "φ", "ॉ"}
    tokens = ["the", "dog", "cat", "sat", "sleeps", "."]
    for word in words:
        if len(word) > 100:
            continue
        if generator.random() < 0.5:
            tokens.append(word)
        for cut in range(1, min(len(word), 4)):
            if generator.random() < 0.5:
                tokens.append(word[:cut])
                tokens.append("##" + word[cut:])
        for character in word:
            tokens.append(character)
            tokens.append("##" + character)
    unique = [
        token
        for token in dict.fromkeys(tokens)
        if token not in SPECIAL_TOKENS and not left_out.intersection(token)
    ]
    generator.shuffle(unique)
    return (
        ["[PAD]"]
        + [f"[unused{index}]" for index in range(10)]
        + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        + unique
    )


@pytest.fixture(scope="module")
def vocabulary():
    return build_vocabulary()


@pytest.fixture(scope="module")
def vocabulary_path(tmp_path_factory, vocabulary):
    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    path.write_text("".join(token + "\n" for token in vocabulary), encoding="utf-8")
    return path


def huggingface_tokenizer(vocabulary_path, vocabulary_size, **settings):
    """transformers' fast BERT tokenizer built offline from a vocab.txt."""
    hf = transformers.BertTokenizerFast(vocab_file=str(vocabulary_path), **settings)
    if len(hf.get_vocab()) != vocabulary_size:
        # transformers 5 ignores `vocab_file` in the constructor and quietly
        # falls back to a five-token vocabulary; it takes the path as `vocab`.
        hf = transformers.BertTokenizerFast(vocab=str(vocabulary_path), **settings)
    assert len(hf.get_vocab()) == vocabulary_size
    return hf


SETTINGS = [
    {"lowercase": True},
    {"lowercase": False},
    {"lowercase": True, "strip_accents": False},
    {"lowercase": False, "strip_accents": True, "tokenize_chinese_chars": False},
]


def hf_settings(settings):
    return {
        "do_lower_case": settings["lowercase"],
        "strip_accents": settings.get("strip_accents"),
        "tokenize_chinese_chars": settings.get("tokenize_chinese_chars", True),
    }


@pytest.fixture(scope="module", params=SETTINGS, ids=lambda s: repr(s))
def tokenizers_pair(request, vocabulary, vocabulary_path):
    ours = BertTokenizer(vocabulary_path, **request.param)
    hf = huggingface_tokenizer(
        vocabulary_path, len(vocabulary), **hf_settings(request.param)
    )
    return ours, hf


def hf_encode(hf, text, pair=None, **options):
    """transformers' encoding of one text (or pair), as a plain dict.

    Unbatched, as `encode` is compared with it: there transformers drops a pair
    that is the empty string (`[CLS] a [SEP]`), while its batched path packs
    `[CLS] a [SEP] [SEP]` (see `test_an_empty_pair_packs_as_huggingface_does`).
    """
    encoding = hf(text, pair, return_offsets_mapping=True, **options)
    return {
        "input_ids": encoding["input_ids"],
        "token_type_ids": encoding["token_type_ids"],
        "offset_mapping": [tuple(span) for span in encoding["offset_mapping"]],
        "tokens": encoding.tokens(),
        "sequence_ids": [-1 if s is None else s for s in encoding.sequence_ids()],
    }


def assert_same_as_hf(encoding, expected, context):
    """`context` names the input, since each test loops over many."""
    assert encoding.token_ids.tolist() == expected["input_ids"], context
    assert encoding.segment_ids.tolist() == expected["token_type_ids"], context
    offsets = [tuple(span) for span in encoding.offsets.tolist()]
    assert offsets == expected["offset_mapping"], context
    assert encoding.tokens == expected["tokens"], context
    assert encoding.sequence_ids.tolist() == expected["sequence_ids"], context
    assert encoding.token_ids.dtype == np.int32
    assert encoding.offsets.shape == (len(encoding), 2)


# Parity with transformers ----------------------------------------------------------
# One test per setting, looping over the samples: the shared conftest resets
# Keras around every test, which costs more than these comparisons.


def test_vocabulary_really_exercises_wordpiece(vocabulary_path):
    tokenizer = BertTokenizer(vocabulary_path)
    tokens = [token for text in SAMPLES for token in tokenizer.tokenize(text)]
    continuations = [token for token in tokens if token.startswith("##")]
    unknown = [token for token in tokens if token == "[UNK]"]
    assert len(continuations) > 50
    assert 3 <= len(unknown) < len(tokens) // 10


def test_single_texts_match_huggingface(tokenizers_pair):
    ours, hf = tokenizers_pair
    for text in SAMPLES:
        assert_same_as_hf(ours.encode(text), hf_encode(hf, text), repr(text))
        assert ours.tokenize(text) == hf.tokenize(text), repr(text)
        for max_length in (2, 5, 9):
            context = f"{text!r}, max_length={max_length}"
            encoding = ours.encode(text, max_length=max_length)
            expected = hf_encode(hf, text, truncation=True, max_length=max_length)
            assert_same_as_hf(encoding, expected, context)
            assert len(encoding) <= max_length


def test_decode_matches_huggingface(tokenizers_pair):
    ours, hf = tokenizers_pair
    for text, pair in zip(SAMPLES, SAMPLES[1:] + SAMPLES[:1]):
        ids = ours.encode(text, pair).token_ids
        for skip in (True, False):
            decoded = ours.decode(ids, skip_special_tokens=skip)
            expected = hf.decode(ids.tolist(), skip_special_tokens=skip)
            assert decoded == expected, (text, pair, skip)


def test_offsets_point_into_the_callers_string(vocabulary_path):
    tokenizer = BertTokenizer(vocabulary_path, lowercase=True)
    text = "Der Café-Besitzer sagt: İstanbul ist schön. the [MASK] sat."
    encoding = tokenizer.encode(text)
    spans = [
        text[start:end]
        for (start, end), sequence in zip(encoding.offsets, encoding.sequence_ids)
        if sequence == 0
    ]
    assert "Café" in spans or "Caf" in spans
    assert "[MASK]" in spans
    assert encoding.offsets[0].tolist() == [0, 0]
    assert encoding.offsets[-1].tolist() == [0, 0]
    # The literal [MASK] keeps its id and belongs to the text.
    mask_row = encoding.tokens.index("[MASK]")
    assert encoding.token_ids[mask_row] == tokenizer.mask_token_id
    assert encoding.sequence_ids[mask_row] == 0


def test_pairs_longest_first_match_huggingface(tokenizers_pair):
    ours, hf = tokenizers_pair
    for max_length in (None, 7, 12, 20, 33):
        truncated = 0
        for text, pair in zip(SAMPLES, SAMPLES[3:] + SAMPLES[:3]):
            context = f"{text!r} + {pair!r}, max_length={max_length}"
            encoding = ours.encode(text, pair, max_length=max_length)
            expected = hf_encode(
                hf,
                text,
                pair,
                truncation="longest_first" if max_length else False,
                max_length=max_length,
            )
            assert_same_as_hf(encoding, expected, context)
            full = len(ours.encode(text, pair, max_length=10_000))
            assert encoding.truncated == (full > len(encoding)), context
            truncated += encoding.truncated
        if max_length is not None and max_length < 20:
            assert truncated > 5


def test_pairs_only_second_match_huggingface(tokenizers_pair):
    ours, hf = tokenizers_pair
    for max_length in (12, 20, 40):
        compared = failed = 0
        for text, pair in zip(SAMPLES, SAMPLES[5:] + SAMPLES[:5]):
            context = f"{text!r} + {pair!r}, max_length={max_length}"
            first_length = len(ours.tokenize(text))
            needs_cut = first_length + len(ours.tokenize(pair)) + 3 > max_length
            # transformers refuses to cut the pair text down to nothing.
            if needs_cut and first_length + 3 >= max_length:
                with pytest.raises(ValueError, match="only_second"):
                    ours.encode(
                        text, pair, max_length=max_length, truncation="only_second"
                    )
                failed += 1
                continue
            encoding = ours.encode(
                text, pair, max_length=max_length, truncation="only_second"
            )
            expected = hf_encode(
                hf, text, pair, truncation="only_second", max_length=max_length
            )
            assert_same_as_hf(encoding, expected, context)
            compared += 1
        assert compared > 3
        assert failed > 0 or max_length == 40


def test_longest_first_split_matches_huggingface_for_every_length(
    vocabulary_path, vocabulary
):
    """Every (first length, second length, max_length): ties included."""
    ours = BertTokenizer(vocabulary_path)
    hf = huggingface_tokenizer(vocabulary_path, len(vocabulary))
    word = "the"
    assert ours.tokenize(word) == [word]
    texts = [" ".join([word] * count) for count in range(8)]
    for max_length in range(3, 14):
        firsts = [a for a in texts for _ in texts]
        seconds = [b for _ in texts for b in texts]
        encodings = ours.encode_batch(firsts, seconds, max_length=max_length)
        hf_batch = hf(
            firsts, seconds, truncation="longest_first", max_length=max_length
        )
        for encoding, ids, types in zip(
            encodings, hf_batch["input_ids"], hf_batch["token_type_ids"]
        ):
            assert encoding.token_ids.tolist() == ids
            assert encoding.segment_ids.tolist() == types


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: repr(s))
def test_huggingface_tokenizer_json_gives_same_outputs(
    tmp_path, vocabulary_path, vocabulary, settings
):
    hf = huggingface_tokenizer(
        vocabulary_path, len(vocabulary), **hf_settings(settings)
    )
    hf.save_pretrained(str(tmp_path))
    loaded = BertTokenizer.from_huggingface_tokenizer_json(tmp_path / "tokenizer.json")
    assert loaded.vocabulary == vocabulary
    assert loaded.lowercase == settings["lowercase"]
    assert loaded.tokenize_chinese_chars == settings.get("tokenize_chinese_chars", True)
    assert loaded.max_length == 512
    for text, pair in zip(SAMPLES, SAMPLES[2:] + SAMPLES[:2]):
        assert_same_as_hf(loaded.encode(text), hf_encode(hf, text), repr(text))
        assert_same_as_hf(
            loaded.encode(text, pair, max_length=16),
            hf_encode(hf, text, pair, truncation="longest_first", max_length=16),
            f"{text!r} + {pair!r}",
        )


def test_huggingface_tokenizer_json_with_bpe_model_is_refused(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({"model": {"type": "BPE", "vocab": {}}}))
    with pytest.raises(ValueError, match="BPE"):
        BertTokenizer.from_huggingface_tokenizer_json(path)


# Presets ------------------------------------------------------------------------------


def test_save_to_preset_and_from_preset_round_trip(tmp_path, vocabulary_path):
    tokenizer = BertTokenizer(
        vocabulary_path, lowercase=False, strip_accents=True, max_length=128
    )
    folder = tmp_path / "preset"
    tokenizer.save_to_preset(folder)
    assert sorted(os.listdir(folder)) == ["tokenizer_config.json", "vocab.txt"]
    # Saving again over an existing preset replaces the files cleanly.
    tokenizer.save_to_preset(folder)
    assert sorted(os.listdir(folder)) == ["tokenizer_config.json", "vocab.txt"]

    restored = BertTokenizer.from_preset(str(folder))
    assert restored.get_config() == tokenizer.get_config()
    assert restored.get_config()["max_length"] == 128
    assert restored.vocabulary == tokenizer.vocabulary
    assert restored.encode_batch(SAMPLES) == tokenizer.encode_batch(SAMPLES)


def test_from_preset_reads_a_huggingface_folder(tmp_path, vocabulary_path, vocabulary):
    hf = huggingface_tokenizer(vocabulary_path, len(vocabulary), do_lower_case=False)
    hf.save_pretrained(str(tmp_path))
    from_json = BertTokenizer.from_preset(tmp_path)
    assert from_json.lowercase is False
    # transformers' tokenizer_config.json next to a vocab.txt is understood too.
    (tmp_path / "vocab.txt").write_bytes(vocabulary_path.read_bytes())
    (tmp_path / "tokenizer.json").unlink()
    from_vocabulary = BertTokenizer.from_preset(tmp_path)
    assert from_vocabulary.get_config() == from_json.get_config()
    for text in SAMPLES:
        assert_same_as_hf(from_vocabulary.encode(text), hf_encode(hf, text), repr(text))


def test_from_preset_without_files_raises(tmp_path):
    with pytest.raises(ValueError, match="vocab.txt"):
        BertTokenizer.from_preset(tmp_path)


def test_vocabulary_file_with_windows_line_ends(tmp_path, vocabulary):
    path = tmp_path / "vocab.txt"
    path.write_bytes("".join(t + "\r\n" for t in vocabulary).encode("utf-8"))
    tokenizer = BertTokenizer.from_vocabulary_file(path)
    assert tokenizer.vocabulary == vocabulary


# Batching and padding -----------------------------------------------------------------


def test_encode_batch_equals_encode(vocabulary_path):
    tokenizer = BertTokenizer(vocabulary_path)
    pairs = SAMPLES[4:] + SAMPLES[:4]
    assert "" in pairs  # the one exception, tested below
    assert tokenizer.encode_batch(SAMPLES) == [tokenizer.encode(t) for t in SAMPLES]
    batch = tokenizer.encode_batch(SAMPLES, pairs, max_length=24)
    for encoding, text, pair in zip(batch, SAMPLES, pairs):
        if pair:
            assert encoding == tokenizer.encode(text, pair, max_length=24)
    assert tokenizer.encode_batch([]) == []


def test_a_missing_special_token_names_the_vocabulary_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n")
    with pytest.raises(ValueError, match=rf"The vocabulary of '{re.escape(str(path))}' has no '\[MASK\]'"):
        BertTokenizer(path)


def test_an_empty_pair_packs_as_huggingface_does(tokenizers_pair):
    """transformers' `tokenizer(a, "")` drops the pair; `tokenizer([a], [""])` keeps its [SEP]."""
    ours, hf = tokenizers_pair
    for text in ("the cat sat", "", "a"):
        single = ours.encode(text, "")
        assert single.token_ids.tolist() == hf(text, "")["input_ids"], repr(text)
        assert single == ours.encode(text)
        assert ours(text, "")["token_ids"][0].tolist() == hf(text, "")["input_ids"]
        (batched,) = ours.encode_batch([text], [""])
        assert batched.token_ids.tolist() == hf([text], [""])["input_ids"][0], repr(text)
        assert batched.tokens[-2:] == ["[SEP]", "[SEP]"]


def test_pad_shapes_and_mask(vocabulary_path):
    tokenizer = BertTokenizer(vocabulary_path)
    encodings = tokenizer.encode_batch(["The dog sleeps.", "", "the [MASK] sat"])
    lengths = [len(encoding) for encoding in encodings]
    batch = tokenizer.pad(encodings)
    assert set(batch) == {"token_ids", "segment_ids", "padding_mask"}
    assert batch["token_ids"].shape == (3, max(lengths))
    assert batch["padding_mask"].dtype == bool
    assert batch["token_ids"].dtype == np.int32
    assert batch["padding_mask"].sum(axis=1).tolist() == lengths
    assert batch["token_ids"][1, 2:].tolist() == [tokenizer.pad_token_id] * (
        max(lengths) - 2
    )
    first_row = batch["token_ids"][0, : lengths[0]]
    assert first_row.tolist() == encodings[0].token_ids.tolist()

    padded = tokenizer.pad(encodings, sequence_length=16)
    assert padded["token_ids"].shape == (3, 16)
    assert padded["segment_ids"].shape == (3, 16)
    assert not padded["padding_mask"][:, max(lengths) :].any()

    with pytest.raises(ValueError, match="sequence_length=3"):
        tokenizer.pad(encodings, sequence_length=3)


def test_call_encodes_and_pads(vocabulary_path):
    tokenizer = BertTokenizer(vocabulary_path)
    batch = tokenizer(SAMPLES, sequence_length=8)
    assert batch["token_ids"].shape == (len(SAMPLES), 8)
    assert (batch["token_ids"][:, 0] == tokenizer.cls_token_id).all()
    single = tokenizer("Who sat?", "The cat sat.")
    assert single["token_ids"].shape[0] == 1
    expected = tokenizer.encode("Who sat?", "The cat sat.")
    assert single["token_ids"][0].tolist() == expected.token_ids.tolist()
    assert single["segment_ids"][0].tolist() == expected.segment_ids.tolist()


def test_encoding_fields_and_special_ids(vocabulary_path, vocabulary):
    tokenizer = BertTokenizer(vocabulary_path)
    encoding = tokenizer.encode("the dog", "the cat")
    assert isinstance(encoding, Encoding)
    assert encoding.tokens[0] == "[CLS]" and encoding.tokens[-1] == "[SEP]"
    assert encoding.sequence_ids[0] == -1
    assert tokenizer.vocabulary_size == len(vocabulary)
    assert tokenizer.pad_token_id == 0
    assert tokenizer.unk_token_id == 11
    assert (tokenizer.cls_token_id, tokenizer.sep_token_id) == (12, 13)
    assert tokenizer.mask_token_id == 14
    assert tokenizer.id_to_token(tokenizer.token_to_id("the")) == "the"
    assert tokenizer.decode(tokenizer.encode("The dog sleeps.").token_ids) == (
        "the dog sleeps."
    )


# Errors -------------------------------------------------------------------------------


def test_max_length_too_small_raises(vocabulary_path):
    tokenizer = BertTokenizer(vocabulary_path)
    with pytest.raises(ValueError, match=r">= 3 for a pair.*max_length=2"):
        tokenizer.encode("a", "b", max_length=2)
    with pytest.raises(ValueError, match="max_length=1"):
        tokenizer.encode("a", max_length=1)
    with pytest.raises(ValueError, match="max_length=1"):
        BertTokenizer(vocabulary_path, max_length=1)


def test_only_second_that_cannot_fit_raises(vocabulary_path):
    tokenizer = BertTokenizer(vocabulary_path)
    with pytest.raises(ValueError, match="only_second.*max_length=5"):
        tokenizer.encode(
            "the dog sleeps .", "the", max_length=5, truncation="only_second"
        )
    with pytest.raises(ValueError, match="only_second"):
        tokenizer.encode("the dog sleeps .", max_length=4, truncation="only_second")
    # The pair text may shrink to one token but not vanish (as transformers).
    with pytest.raises(ValueError, match="only_second.*max_length=7"):
        tokenizer.encode(
            "the dog sleeps .", "the cat", max_length=7, truncation="only_second"
        )
    encoding = tokenizer.encode(
        "the dog sleeps .", "the cat", max_length=8, truncation="only_second"
    )
    assert encoding.tokens[-3:] == ["[SEP]", "the", "[SEP]"]
    assert encoding.truncated


def test_missing_vocabulary_file_raises(tmp_path):
    missing = tmp_path / "nowhere" / "vocab.txt"
    with pytest.raises(ValueError, match="nowhere"):
        BertTokenizer(missing)
    with pytest.raises(ValueError, match="nowhere"):
        BertTokenizer.from_vocabulary_file(str(missing))


def test_vocabulary_without_a_special_token_raises(vocabulary):
    without_mask = [token for token in vocabulary if token != "[MASK]"]
    with pytest.raises(ValueError, match=r"\[MASK\]"):
        BertTokenizer(without_mask)
    with pytest.raises(ValueError, match="<cls>"):
        BertTokenizer(vocabulary, cls_token="<cls>")


def test_non_string_text_raises(vocabulary_path):
    tokenizer = BertTokenizer(vocabulary_path)
    for bad_text in (123, None, b"bytes", ["nested"]):
        type_name = type(bad_text).__name__
        with pytest.raises(ValueError, match=type_name):
            tokenizer.encode(bad_text)
        with pytest.raises(ValueError, match=type_name):
            tokenizer.tokenize(bad_text)
        with pytest.raises(ValueError, match=type_name):
            tokenizer.encode_batch(["fine", bad_text])
        with pytest.raises(ValueError, match=type_name):
            tokenizer.encode_batch(["fine"], [bad_text])
        if bad_text is not None:  # pair=None means "no pair"
            with pytest.raises(ValueError, match=type_name):
                tokenizer.encode("fine", pair=bad_text)


def test_unknown_truncation_raises(vocabulary_path):
    tokenizer = BertTokenizer(vocabulary_path)
    with pytest.raises(ValueError, match=r"longest_first.*only_second.*'only_first'"):
        tokenizer.encode("a", truncation="only_first")


def test_bad_settings_and_lookups_raise(vocabulary_path):
    with pytest.raises(ValueError, match="lowercase='yes'"):
        BertTokenizer(vocabulary_path, lowercase="yes")
    with pytest.raises(ValueError, match="dict"):
        BertTokenizer({"[PAD]": 0})
    tokenizer = BertTokenizer(vocabulary_path)
    with pytest.raises(ValueError, match="not-a-token"):
        tokenizer.token_to_id("not-a-token")
    with pytest.raises(ValueError, match="id=999999"):
        tokenizer.id_to_token(999999)
    with pytest.raises(ValueError, match="-1"):
        tokenizer.decode([2, -1])
    with pytest.raises(ValueError, match="len\\(pairs\\)=1"):
        tokenizer.encode_batch(["a", "b"], ["c"])
