"""Masked-LM masking: BERT's statistics for the numpy rule and the in-graph (keras.ops) one."""

import keras
import numpy as np
import pytest

from inference_helpers import make_tokenizer
from inference_helpers import random_text
from kbert.pretraining import DynamicMasking, mask_tokens
from kbert.preprocessing.masking import continuation_table

PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
SPECIAL = [PAD, UNK, CLS, SEP, MASK]
VOCABULARY_SIZE = 30522
LENGTH = 128
SETTINGS = dict(
    mask_token_id=MASK,
    special_token_ids=SPECIAL,
    vocabulary_size=VOCABULARY_SIZE,
    masked_lm_prob=0.15,
    max_predictions_per_seq=20,
)


def packed_batch(rows=1200, length=LENGTH, seed=0):
    """`[CLS] a [SEP] b [SEP] [PAD]...` rows of random lengths; > 100k maskable tokens."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(len(SPECIAL), VOCABULARY_SIZE, size=(rows, length)).astype(np.int32)
    lengths = np.where(rng.random(rows) < 0.8, length, rng.integers(8, length, size=rows))
    for row, row_length in enumerate(lengths):
        token_ids[row, 0] = CLS
        token_ids[row, rng.integers(2, row_length - 2)] = SEP
        token_ids[row, row_length - 1] = SEP
        token_ids[row, row_length:] = PAD
    return token_ids


def check_bert_statistics(token_ids, masked):
    """Asserts the acceptance statistics; returns them."""
    maskable = ~np.isin(token_ids, SPECIAL)
    weights = masked["mask_weights"] > 0
    positions = masked["mask_positions"]
    assert maskable.sum() >= 100_000
    chosen_fraction = weights.sum() / maskable.sum()
    assert abs(chosen_fraction - 0.15) <= 0.01

    # Never a special token; slots hold sorted positions first, then zero padding.
    originals = np.take_along_axis(token_ids, positions, axis=1)
    assert not np.isin(originals[weights], SPECIAL).any()
    np.testing.assert_array_equal(masked["mask_ids"][weights], originals[weights])
    assert (masked["mask_ids"][~weights] == 0).all() and (positions[~weights] == 0).all()
    assert (weights[:, :-1] >= weights[:, 1:]).all()
    assert (np.diff(positions, axis=1)[weights[:, 1:]] > 0).all()

    # Only chosen positions change; 80% [MASK], 10% random token, 10% unchanged.
    chosen = np.zeros_like(maskable)
    np.put_along_axis(chosen, positions, weights, axis=1)
    np.testing.assert_array_equal(masked["token_ids"][~chosen], token_ids[~chosen])
    after = masked["token_ids"][chosen]
    before = token_ids[chosen]
    fractions = {
        "mask": np.mean(after == MASK),
        "random": np.mean((after != MASK) & (after != before)),
        "unchanged": np.mean(after == before),
    }
    assert abs(fractions["mask"] - 0.8) <= 0.02
    assert abs(fractions["random"] - 0.1) <= 0.02
    assert abs(fractions["unchanged"] - 0.1) <= 0.02
    assert not np.isin(after[after != MASK], SPECIAL).any()
    return chosen_fraction, fractions


def test_numpy_masking_has_berts_statistics():
    token_ids = packed_batch()
    masked = mask_tokens(token_ids, np.random.default_rng(1), **SETTINGS)
    assert masked["mask_positions"].shape == (len(token_ids), 20)
    assert {name: array.dtype for name, array in masked.items()} == {
        "token_ids": np.int32,
        "mask_positions": np.int32,
        "mask_ids": np.int32,
        "mask_weights": np.float32,
    }
    check_bert_statistics(token_ids, masked)


def test_numpy_masking_is_a_pure_function_of_the_generator():
    token_ids = packed_batch(rows=50)
    first = mask_tokens(token_ids, np.random.default_rng(7), **SETTINGS)
    again = mask_tokens(token_ids, np.random.default_rng(7), **SETTINGS)
    other = mask_tokens(token_ids, np.random.default_rng(8), **SETTINGS)
    for name in first:
        np.testing.assert_array_equal(first[name], again[name])
    assert not np.array_equal(first["mask_positions"], other["mask_positions"])


def test_max_predictions_per_seq_caps_each_row():
    token_ids = packed_batch(rows=200)
    masked = mask_tokens(token_ids, np.random.default_rng(2), **{**SETTINGS, "masked_lm_prob": 0.5})
    counts = masked["mask_weights"].sum(axis=1)
    assert counts.max() == 20
    assert (counts[(token_ids[:, -1] != PAD)] == 20).all()


def test_whole_word_masking_masks_every_piece_of_a_word_or_none():
    token_ids = packed_batch(rows=900, seed=3)
    rng = np.random.default_rng(4)
    continuation = rng.random(token_ids.shape) < 0.4
    masked = mask_tokens(token_ids, rng, word_continuation=continuation, **SETTINGS)

    maskable = ~np.isin(token_ids, SPECIAL)
    chosen = np.zeros_like(maskable)
    np.put_along_axis(chosen, masked["mask_positions"], masked["mask_weights"] > 0, axis=1)
    starts = maskable & ~(continuation & np.pad(maskable, ((0, 0), (1, 0)))[:, :-1])
    word_ids = np.cumsum(starts, axis=1)
    multi_piece_words = 0
    for row in range(len(token_ids)):
        words = word_ids[row][maskable[row]]
        picked = chosen[row][maskable[row]]
        sizes = np.bincount(words)
        picked_per_word = np.bincount(words, weights=picked)
        assert np.all((picked_per_word == 0) | (picked_per_word == sizes))
        multi_piece_words += int(((picked_per_word > 0) & (sizes > 1)).sum())
    assert multi_piece_words > 1000
    fraction = chosen.sum() / maskable.sum()
    assert abs(fraction - 0.15) <= 0.01
    # A word piece never joins a word across [SEP]: maskable tokens after [SEP] start words.
    assert not (chosen & ~maskable).any()


def test_masking_rejects_bad_arguments():
    token_ids = packed_batch(rows=2)
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        mask_tokens(token_ids, 0, **SETTINGS)
    with pytest.raises(ValueError, match="masked_lm_prob"):
        mask_tokens(token_ids, np.random.default_rng(), **{**SETTINGS, "masked_lm_prob": 1.5})
    with pytest.raises(ValueError, match="token_ids"):
        mask_tokens(token_ids[0], np.random.default_rng(), **SETTINGS)
    with pytest.raises(ValueError, match=r"\[0, 30522\)"):
        mask_tokens(token_ids + VOCABULARY_SIZE, np.random.default_rng(), **SETTINGS)
    with pytest.raises(ValueError, match="special_token_ids"):
        mask_tokens(token_ids, np.random.default_rng(), **{**SETTINGS, "special_token_ids": [-1]})


def dynamic_masking(seed=5):
    return DynamicMasking(
        VOCABULARY_SIZE,
        MASK,
        SPECIAL,
        masked_lm_prob=0.15,
        max_predictions_per_seq=20,
        seed=seed,
    )


def compiled_masking_model(layer, length=LENGTH):
    token_ids = keras.Input((length,), dtype="int32", name="token_ids")
    model = keras.Model(token_ids, layer(token_ids))
    # XLA on JAX and TensorFlow; PyTorch stays eager (torch.compile takes a minute here).
    model.compile(jit_compile="auto")
    return model


def test_in_graph_masking_has_berts_statistics_and_the_numpy_rules_counts():
    token_ids = packed_batch()
    layer = dynamic_masking()
    model = compiled_masking_model(layer)
    masked = model.predict(token_ids, batch_size=len(token_ids), verbose=0)
    assert masked["mask_positions"].shape == (len(token_ids), 20)
    assert masked["token_ids"].dtype == np.int32 and masked["mask_weights"].dtype == np.float32
    chosen_fraction, fractions = check_bert_statistics(token_ids, masked)

    reference = layer.mask_numpy(token_ids, np.random.default_rng(1))
    reference_fraction, reference_fractions = check_bert_statistics(token_ids, reference)
    # The same count in every row, and statistics that agree.
    np.testing.assert_array_equal(
        masked["mask_weights"].sum(axis=1), reference["mask_weights"].sum(axis=1)
    )
    assert chosen_fraction == pytest.approx(reference_fraction, abs=1e-9)
    for name in fractions:
        assert fractions[name] == pytest.approx(reference_fractions[name], abs=0.02)

    # Fresh masks on the next call: the seed state advances inside the compiled step.
    again = model.predict(token_ids[:64], batch_size=64, verbose=0)
    assert not np.array_equal(again["mask_positions"], masked["mask_positions"][:64])


def test_in_graph_masking_keeps_its_shapes_for_rows_shorter_than_p():
    # L = 12 < P = 20: only 10 maskable tokens, yet P slots come back.
    token_ids = np.array([[CLS, *range(10, 15), SEP, *range(20, 25), SEP]], dtype=np.int32)
    masked = {
        name: keras.ops.convert_to_numpy(value)
        for name, value in dynamic_masking()(token_ids).items()
    }
    assert masked["mask_positions"].shape == (1, 20)
    assert masked["mask_weights"].sum() == 2  # round(0.15 * 10)
    assert masked["token_ids"][0, 0] == CLS and masked["token_ids"][0, 6] == SEP


@pytest.mark.skipif(
    keras.backend.backend() == "torch", reason="PyTorch runs eagerly: nothing is compiled"
)
def test_in_graph_masking_compiles_once_per_sequence_length():
    traces = []

    class CountingMasking(DynamicMasking):
        def call(self, token_ids):
            traces.append(token_ids.shape)
            return super().call(token_ids)

    model = compiled_masking_model(CountingMasking(VOCABULARY_SIZE, MASK, SPECIAL, seed=1))
    token_ids = packed_batch(rows=64)
    model.predict(token_ids, batch_size=16, verbose=0)
    traced = len(traces)
    model.predict(token_ids, batch_size=16, verbose=0)
    assert len(traces) == traced


def test_dynamic_masking_serialises():
    layer = dynamic_masking(seed=3)
    restored = DynamicMasking.from_config(layer.get_config())
    assert restored.get_config() == layer.get_config()
    assert restored.special_token_ids == SPECIAL
    with pytest.raises(ValueError, match="max_predictions_per_seq"):
        DynamicMasking(VOCABULARY_SIZE, MASK, SPECIAL, max_predictions_per_seq=0)


def test_continuation_table_marks_the_pieces_that_continue_a_word(tmp_path):
    """By id, whole-word masking finds the words `Encoding.word_ids` give."""
    tokenizer = make_tokenizer(tmp_path)
    rng = np.random.default_rng(0)
    texts = [random_text(rng, int(rng.integers(1, 20))) for _ in range(300)]
    table = continuation_table(tokenizer)
    continued = 0
    for encoding in tokenizer.encode_batch(texts):
        word_ids = encoding.word_ids
        same_word = (word_ids[1:] == word_ids[:-1]) & (word_ids[1:] >= 0)
        np.testing.assert_array_equal(table[encoding.token_ids[1:]], same_word)
        continued += int(same_word.sum())
    assert continued > 100
