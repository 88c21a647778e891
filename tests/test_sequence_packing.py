"""Sequence packing: packed rows score what their instances score alone; the packer; runs."""

import logging
import pathlib
import threading

import keras
import numpy as np
import pytest
from model_helpers import TINY

from kbert.architecture.bert_config import BertConfig
from kbert.layers.packed_sequences import packed_attention_mask, packed_position_ids
from kbert.models import BertBackbone, BertPretrainer
from kbert.pretraining import create_pretraining_data
from kbert.pretraining.packed_shard_reader import PackedShardReader
from kbert.pretraining.pretraining_config import PretrainingConfig
from kbert.pretraining.pretraining_loop import PretrainingLoop
from kbert.pretraining.pretraining_objective import PretrainingObjective
from kbert.pretraining.sequence_packer import SequencePacker
from kbert.pretraining.shard_reader import ShardReader
from kbert.tokenizer import BertTokenizer

LENGTH = TINY["max_positions"]  # 24
PREDICTIONS = 3
# Two packed rows: three instances filling the first exactly, two in the second.
INSTANCE_LENGTHS = (7, 8, 9, 10, 6)
ROWS = np.array([[0, 1, 2], [3, 4, -1]])


def instance_arrays(lengths=INSTANCE_LENGTHS, seed=0):
    """Shard-like arrays of instances: `[CLS] a [SEP] b [SEP]`, masks, labels."""
    rng = np.random.default_rng(seed)
    count = len(lengths)
    token_ids = np.zeros((count, LENGTH), np.int32)
    segment_ids = np.zeros((count, LENGTH), np.int8)
    mask_positions = np.zeros((count, PREDICTIONS), np.int32)
    mask_ids = np.zeros((count, PREDICTIONS), np.int32)
    mask_weights = np.zeros((count, PREDICTIONS), np.float32)
    for row, length in enumerate(lengths):
        middle = length // 2
        token_ids[row, :length] = rng.integers(5, TINY["vocabulary_size"], length)
        token_ids[row, [0, middle - 1, length - 1]] = [2, 3, 3]
        segment_ids[row, middle:length] = 1
        # The last instance predicts 2 tokens only: padded prediction slots must not count.
        used = PREDICTIONS if row < count - 1 else 2
        positions = np.sort(rng.choice(np.arange(1, length - 1), used, replace=False))
        mask_positions[row, :used] = positions
        mask_ids[row, :used] = rng.integers(5, TINY["vocabulary_size"], used)
        mask_weights[row, :used] = 1.0
    return {
        "token_ids": token_ids,
        "segment_ids": segment_ids,
        "lengths": np.array(lengths, np.int32),
        "nsp_labels": rng.integers(0, 2, count).astype(np.int32),
        "mask_positions": mask_positions,
        "mask_ids": mask_ids,
        "mask_weights": mask_weights,
    }


def unpacked_batch(arrays):
    """The instances one per row, as `ShardReader` gives them."""
    return {
        "token_ids": arrays["token_ids"],
        "segment_ids": arrays["segment_ids"].astype(np.int32),
        "padding_mask": np.arange(LENGTH)[None, :] < arrays["lengths"][:, None],
        "nsp_labels": arrays["nsp_labels"],
        "mask_positions": arrays["mask_positions"],
        "mask_ids": arrays["mask_ids"],
        "mask_weights": arrays["mask_weights"],
    }


def numpy_outputs(outputs):
    return {name: keras.ops.convert_to_numpy(value) for name, value in outputs.items()}


def slots():
    """(row, slot, instance, start) of every packed instance of `ROWS`."""
    lengths = np.array(INSTANCE_LENGTHS)
    for row, members in enumerate(ROWS):
        start = 0
        for slot, instance in enumerate(members):
            if instance >= 0:
                yield row, slot, int(instance), start
                start += int(lengths[instance])


def test_packed_position_ids_and_mask():
    index = np.array([[1, 1, 1, 2, 2, 3, 0, 0]])
    positions = keras.ops.convert_to_numpy(packed_position_ids(index))
    np.testing.assert_array_equal(positions, [[0, 1, 2, 0, 1, 0, 0, 0]])
    mask = keras.ops.convert_to_numpy(packed_attention_mask(index))[0, 0]
    np.testing.assert_array_equal(mask, index[0][:, None] == index[0][None, :])


def test_packed_rows_give_each_instance_its_own_outputs_and_losses():
    """What is equal, per packed instance, to the instance alone in a padded row:

    - `sequence_output` at its tokens (within 1e-5);
    - `mlm_logits` at its real predictions (within 1e-5);
    - `nsp_logits` of its slot (within 1e-5).
    And per batch: the packed batch's masked-LM loss is the mean over the real
    predictions of all five instances, its next-sentence loss the mean over the five
    instances, the same figures (within 1e-5) as the unpacked batch of five rows; so
    are the total loss and both accuracies.
    """
    arrays = instance_arrays()
    packed = SequencePacker(LENGTH).pack(arrays, ROWS)
    unpacked = unpacked_batch(arrays)
    pretrainer = BertPretrainer(BertBackbone(**TINY))
    backbone = pretrainer.backbone

    def inputs(batch, names):
        return {name: batch[name] for name in names}

    base = ("token_ids", "segment_ids", "padding_mask")
    alone = numpy_outputs(backbone(inputs(unpacked, base)))["sequence_output"]
    together = numpy_outputs(backbone(inputs(packed, base + ("sequence_index",))))
    alone_heads = numpy_outputs(pretrainer(inputs(unpacked, base + ("mask_positions",))))
    together_heads = numpy_outputs(
        pretrainer(inputs(packed, base + ("sequence_index", "mask_positions", "cls_positions")))
    )
    assert together_heads["nsp_logits"].shape == (2, 3, 2)
    assert together_heads["mlm_logits"].shape == (2, 3 * PREDICTIONS, TINY["vocabulary_size"])
    checked = 0
    for row, slot, instance, start in slots():
        length = INSTANCE_LENGTHS[instance]
        np.testing.assert_allclose(
            together["sequence_output"][row, start : start + length],
            alone[instance, :length],
            atol=1e-5,
        )
        np.testing.assert_allclose(
            together_heads["nsp_logits"][row, slot], alone_heads["nsp_logits"][instance], atol=1e-5
        )
        real = arrays["mask_weights"][instance] > 0
        packed_slots = slice(slot * PREDICTIONS, (slot + 1) * PREDICTIONS)
        np.testing.assert_allclose(
            together_heads["mlm_logits"][row, packed_slots][real],
            alone_heads["mlm_logits"][instance][real],
            atol=1e-5,
        )
        checked += 1
    assert checked == len(INSTANCE_LENGTHS)
    # The first sequence of a packed row is not its only one: the row's other instances
    # would change it without the block-diagonal mask.
    unmasked = numpy_outputs(backbone(inputs(packed, base)))["sequence_output"]
    assert np.abs(unmasked[0, 7:15] - alone[1, :8]).max() > 1e-3

    objective = PretrainingObjective(pretrainer)
    objective.compile_objective(keras.optimizers.SGD(0.0))
    packed_logs = objective.test_on_batch(packed, return_dict=True)
    unpacked_logs = objective.test_on_batch(unpacked, return_dict=True)
    assert set(packed_logs) == set(unpacked_logs)
    for name, value in unpacked_logs.items():
        assert float(packed_logs[name]) == pytest.approx(float(value), abs=1e-5), name
    assert float(unpacked_logs["nsp_logits_loss"]) > 0.1  # a loss, not a zero


def test_the_objective_reports_packed_rows_to_the_attention_dispatch(caplog):
    if keras.backend.backend() != "jax":
        pytest.skip("the cuDNN dispatch, and so its fallback message, is JAX's")
    from kbert.layers import attention_dispatch

    attention_dispatch._logged_reasons.clear()
    packed = SequencePacker(LENGTH).pack(instance_arrays(), ROWS)
    backbone = BertBackbone(**TINY)
    # DEBUG: on a CPU the reason is logged at DEBUG (cuDNN never runs there), INFO on a GPU.
    with caplog.at_level("DEBUG", logger="kbert.layers"):
        backbone({name: packed[name] for name in (
            "token_ids", "segment_ids", "padding_mask", "sequence_index")})
    assert any("block-diagonal" in record.getMessage() for record in caplog.records)


def test_bad_packed_inputs_are_refused():
    packed = SequencePacker(LENGTH).pack(instance_arrays(), ROWS)
    backbone = BertBackbone(**TINY)
    names = ("token_ids", "segment_ids", "padding_mask", "sequence_index")
    inputs = {name: np.array(packed[name]) for name in names}
    inputs["sequence_index"][1, 20] = 2  # a token after the padding
    with pytest.raises(ValueError, match="sequence_index"):
        backbone(inputs)
    inputs = {name: np.array(packed[name]) for name in names}
    inputs["padding_mask"][1, 3] = False
    with pytest.raises(ValueError, match="padding_mask"):
        backbone(inputs)
    pretrainer = BertPretrainer(backbone)
    inputs = {name: packed[name] for name in names + ("mask_positions",)}
    with pytest.raises(ValueError, match="cls_positions"):
        pretrainer(inputs)


# --- The packer -------------------------------------------------------------------------


def variable_lengths(count=2000, length=128, seed=0):
    """Lengths like those of short documents: uniform in [8, length]."""
    return np.random.default_rng(seed).integers(8, length + 1, count)


def test_the_plan_packs_every_instance_once_within_the_limits():
    lengths = variable_lengths()
    packer = SequencePacker(128, max_sequences_per_row=3)
    rows = packer.plan(lengths, seed=[5, 0])
    members = rows[rows >= 0]
    np.testing.assert_array_equal(np.sort(members), np.arange(len(lengths)))
    tokens = np.where(rows >= 0, lengths[np.maximum(rows, 0)], 0).sum(axis=1)
    assert tokens.max() <= 128
    assert np.all((rows >= 0).sum(axis=1) <= 3)
    # Slots fill from the left.
    assert not np.any((rows[:, 1:] >= 0) & (rows[:, :-1] < 0))
    np.testing.assert_array_equal(packer.plan(lengths, seed=[5, 0]), rows)
    assert not np.array_equal(packer.plan(lengths, seed=[6, 0]), rows)

    unpacked = packer.fill_factor(lengths, len(lengths))
    packed = packer.fill_factor(lengths, len(rows))
    print(f"fill factor {unpacked:.3f} -> {packed:.3f}, {len(lengths)} -> {len(rows)} rows")
    # Uniform lengths in [8, 128] fill 53% of unpacked rows; best-fit decreasing with
    # up to 3 per row fills over 95% (measured: 0.543 -> 0.978, 2000 -> 1111 rows).
    assert unpacked == pytest.approx(0.54, abs=0.02)
    assert packed > 0.95
    # One per row is no packing at all.
    assert len(SequencePacker(128, max_sequences_per_row=1).plan(lengths)) == len(lengths)


def test_pack_lays_out_the_instances_of_each_row():
    arrays = instance_arrays()
    packed = SequencePacker(LENGTH).pack(arrays, ROWS)
    for row, slot, instance, start in slots():
        length = INSTANCE_LENGTHS[instance]
        span = slice(start, start + length)
        np.testing.assert_array_equal(
            packed["token_ids"][row, span], arrays["token_ids"][instance, :length]
        )
        np.testing.assert_array_equal(packed["sequence_index"][row, span], slot + 1)
        assert packed["cls_positions"][row, slot] == start
        assert packed["nsp_labels"][row, slot] == arrays["nsp_labels"][instance]
        weights = packed["mask_weights"][row, slot * PREDICTIONS : (slot + 1) * PREDICTIONS]
        np.testing.assert_array_equal(weights, arrays["mask_weights"][instance])
        positions = packed["mask_positions"][row, slot * PREDICTIONS : (slot + 1) * PREDICTIONS]
        used = weights > 0
        np.testing.assert_array_equal(
            packed["token_ids"][row, positions[used]],
            arrays["token_ids"][instance, arrays["mask_positions"][instance][used]],
        )
    np.testing.assert_array_equal(packed["nsp_weights"], [[1, 1, 1], [1, 1, 0]])
    # Row 1 holds 16 tokens: 8 of padding, index 0, the stored padding token.
    assert packed["padding_mask"][1].sum() == 16 and packed["padding_mask"][0].all()
    np.testing.assert_array_equal(packed["sequence_index"][1, 16:], 0)
    np.testing.assert_array_equal(packed["token_ids"][1, 16:], 0)


def test_the_packer_refuses_what_does_not_fit():
    with pytest.raises(ValueError, match="lengths"):
        SequencePacker(16).plan([4, 17])
    with pytest.raises(ValueError, match="more than 24"):
        SequencePacker(LENGTH).pack(instance_arrays(), np.array([[0, 1, 2], [2, 3, 4]]))
    with pytest.raises(ValueError, match="max_sequences_per_row"):
        SequencePacker(16, max_sequences_per_row=0)


# --- Shards, training, resume ------------------------------------------------------------

WORDS = [f"w{index}" for index in range(30)]
SHARD_LENGTH = 24


def make_variable_shards(folder, dynamic_masking=False, seed=0):
    """Shards of short, variable-length documents (many instances far below 24 tokens)."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocabulary = folder / "vocab.txt"
    vocabulary.write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n",
        encoding="utf-8",
    )
    tokenizer = BertTokenizer.from_vocabulary_file(vocabulary)
    rng = np.random.default_rng(seed)
    documents = []
    for _ in range(40):
        start = int(rng.integers(len(WORDS)))
        sentences = int(rng.integers(2, 5))
        documents.append(
            "\n".join(
                " ".join([WORDS[(start + sentence) % len(WORDS)]] * int(rng.integers(1, 5)))
                for sentence in range(sentences)
            )
        )
    text = folder / "corpus.txt"
    text.write_text("\n\n".join(documents) + "\n", encoding="utf-8")
    create_pretraining_data(
        [text],
        tokenizer,
        folder / "shards",
        max_seq_length=SHARD_LENGTH,
        max_predictions_per_seq=PREDICTIONS,
        dupe_factor=3,
        short_seq_prob=0.5,
        masking=not dynamic_masking,
        instances_per_shard=50,
        seed=seed + 1,
    )
    return folder / "shards", tokenizer


@pytest.fixture(scope="module")
def variable_shards(tmp_path_factory):
    return make_variable_shards(tmp_path_factory.mktemp("packing"))


def test_the_packed_reader_covers_the_shards_once_and_fills_its_rows(variable_shards):
    data, _ = variable_shards
    plain = ShardReader(data)
    reader = PackedShardReader(data, max_sequences_per_row=3, seed=3)
    assert len(plain.manifest["shards"]) > 1
    print(repr(reader))
    assert reader.num_rows < plain.num_instances
    assert reader.fill_factor > 1.5 * reader.unpacked_fill_factor
    batches = list(reader.batches(4, shuffle=True, seed=[3, 0]))
    assert sum(len(batch["token_ids"]) for batch in batches) == reader.num_rows
    # Prediction slots: as many as the fullest row has predictions, all of them kept.
    width = reader.max_predictions_per_seq
    assert 1 <= width < 3 * PREDICTIONS  # measured: 3, as many as an unpacked row
    assert all(batch["mask_weights"].shape[1] == width for batch in batches)
    assert max(batch["mask_weights"].sum(axis=1).max() for batch in batches) == width
    assert sum(batch["mask_weights"].sum() for batch in batches) == sum(
        batch["mask_weights"].sum() for batch in plain.batches(7)
    )
    for batch in batches:
        used = batch["mask_weights"] > 0
        rows = np.nonzero(used)[0]
        # Each prediction points at a real token of its row.
        assert batch["padding_mask"][rows, batch["mask_positions"][used]].all()
    # Every instance once: the multiset of (labels, tokens) of the instances is kept.
    instances = sorted(
        tuple(batch["token_ids"][row, batch["sequence_index"][row] == slot + 1])
        for batch in batches
        for row in range(len(batch["token_ids"]))
        for slot in range(3)
        if batch["nsp_weights"][row, slot]
    )
    expected = sorted(
        tuple(batch["token_ids"][row, : int(batch["padding_mask"][row].sum())])
        for batch in plain.batches(7)
        for row in range(len(batch["token_ids"]))
    )
    assert instances == expected
    # The order is the seed's alone.
    again = list(PackedShardReader(data, seed=3).batches(4, shuffle=True, seed=[3, 0]))
    for first, second in zip(batches, again):
        np.testing.assert_array_equal(first["token_ids"], second["token_ids"])


def tiny_config(tokenizer):
    return BertConfig(
        **dict(TINY, vocabulary_size=tokenizer.vocabulary_size, max_positions=SHARD_LENGTH)
    )


class CancelAt:
    def __init__(self, step):
        self.step = step
        self.event = threading.Event()

    def on_step(self, step, logs):
        if step == self.step:
            self.event.set()


def weights_of(loop):
    return [keras.ops.convert_to_numpy(variable) for variable in loop.model.pretrainer.weights]


@pytest.mark.parametrize("dynamic_masking", [False, True], ids=["stored-masks", "dynamic-masks"])
def test_a_packed_run_resumes_to_the_weights_of_an_uninterrupted_one(
    tmp_path, dynamic_masking, caplog
):
    data, tokenizer = make_variable_shards(tmp_path / "corpus", dynamic_masking=dynamic_masking)
    config = PretrainingConfig(
        batch_size=4,
        steps=4,
        gradient_accumulation_steps=2,
        learning_rate=1e-2,
        warmup_steps=1,
        checkpoint_every=None,
        dynamic_masking=dynamic_masking,
        max_predictions_per_seq=PREDICTIONS,
        pack_sequences=True,
        seed=7,
    )
    model = {"backbone_config": tiny_config(tokenizer), "tokenizer": tokenizer}
    with caplog.at_level(logging.INFO, logger="kbert.pretraining"):
        straight_loop = PretrainingLoop(tmp_path / "straight", config)
        straight = straight_loop.run(data, **model)
    assert straight.status == "completed"
    assert any("fill factor" in record.getMessage() for record in caplog.records)
    assert set(straight.train_metrics) == {
        "loss", "mlm_loss", "mlm_accuracy", "nsp_loss", "nsp_accuracy",
    }
    assert all(np.isfinite(value) for value in straight.train_metrics.values())
    expected = weights_of(straight_loop)

    canceller = CancelAt(3)  # inside an accumulation: 3 of 8 batches
    loop = PretrainingLoop(
        tmp_path / "resumed", config, callbacks=[canceller], cancellation=canceller.event
    )
    assert loop.run(data, **model).global_step == 3
    keras.utils.set_random_seed(999)  # the resumed run must not depend on the global seed
    resumed_loop = PretrainingLoop(tmp_path / "resumed", config)
    resumed = resumed_loop.run(data, resume=True, **model)
    assert resumed.status == "completed" and resumed.global_step == 8
    for before, after in zip(expected, weights_of(resumed_loop)):
        np.testing.assert_allclose(after, before, rtol=0, atol=1e-6)
    assert resumed.train_metrics == straight.train_metrics

    # Packing is part of the run's identity.
    unpacked = PretrainingConfig(**dict(config.to_dict(), pack_sequences=False))
    with pytest.raises(ValueError, match="pack_sequences"):
        PretrainingLoop(tmp_path / "resumed", unpacked).run(data, resume=True, **model)


def test_pretrain_command_packs_sequences(variable_shards, tmp_path, caplog):
    from kbert.cli import main

    data, _ = variable_shards
    arguments = [
        "pretrain", "--data", str(data), "--eval-data", str(data),
        "--output", str(tmp_path / "run"), "--size", "tiny",
        "--vocab", str(data.parent / "vocab.txt"), "--steps", "2", "--batch-size", "4",
        "--warmup-steps", "1", "--pack-sequences", "--max-sequences-per-row", "2",
        "--json", "--no-progress",
    ]
    with caplog.at_level(logging.INFO, logger="kbert.pretraining"):
        assert main(arguments) == 0
    messages = [record.getMessage() for record in caplog.records]
    assert any("fill factor" in message and "at most 2 per row" in message for message in messages)
    assert (tmp_path / "run" / "model" / "config.json").is_file()


def test_config_checks_the_packing_settings():
    with pytest.raises(ValueError, match="max_sequences_per_row"):
        PretrainingConfig(max_sequences_per_row=0)
    with pytest.raises(ValueError, match="pack_sequences"):
        PretrainingConfig(pack_sequences="yes")
