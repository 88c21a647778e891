"""Shards: written atomically in fixed-size files with a manifest, read back as model batches."""

import json

import numpy as np
import pytest

from kbert.pretraining import ShardReader, ShardWriter
from kbert.pretraining.shard_writer import vocabulary_fingerprint
from kbert.tokenizer import BertTokenizer

LENGTH = 16
PREDICTIONS = 4


def instance_batch(count, start=0, masked=True):
    """`count` fake instances; token_ids[:, 1] numbers them from `start`."""
    rng = np.random.default_rng(start)
    lengths = rng.integers(5, LENGTH + 1, size=count).astype(np.int32)
    token_ids = rng.integers(5, 50, size=(count, LENGTH)).astype(np.int32)
    token_ids[:, 1] = np.arange(start, start + count)
    token_ids[np.arange(LENGTH)[None, :] >= lengths[:, None]] = 0
    batch = {
        "token_ids": token_ids,
        "segment_ids": (np.arange(LENGTH)[None, :] >= lengths[:, None] // 2).astype(np.int8),
        "lengths": lengths,
        "nsp_labels": rng.integers(0, 2, size=count).astype(np.int32),
    }
    if masked:
        batch["mask_positions"] = np.sort(
            rng.integers(1, 5, size=(count, PREDICTIONS)), axis=1
        ).astype(np.int32)
        batch["mask_ids"] = rng.integers(5, 50, size=(count, PREDICTIONS)).astype(np.int32)
        batch["mask_weights"] = np.ones((count, PREDICTIONS), np.float32)
    return batch


def write_dataset(folder, sizes, instances_per_shard, masked=True, metadata=None):
    batches = []
    with ShardWriter(folder, instances_per_shard=instances_per_shard, metadata=metadata) as writer:
        start = 0
        for size in sizes:
            batches.append(instance_batch(size, start, masked))
            writer.write(batches[-1])
            start += size
    return {name: np.concatenate([batch[name] for batch in batches]) for name in batches[0]}, writer


def test_shards_round_trip_in_order(tmp_path):
    written, writer = write_dataset(
        tmp_path, [7, 30, 1, 45], instances_per_shard=20, metadata={"settings": {"seed": 1}}
    )
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["num_instances"] == 83 == writer.num_instances
    assert [shard["num_instances"] for shard in manifest["shards"]] == [20, 20, 20, 20, 3]
    assert manifest["settings"] == {"seed": 1}
    assert manifest["arrays"]["token_ids"] == {"dtype": "int32", "shape": [LENGTH]}
    assert manifest["arrays"]["mask_weights"] == {"dtype": "float32", "shape": [PREDICTIONS]}
    assert sorted(path.name for path in tmp_path.iterdir()) == ["manifest.json"] + [
        f"shard-{index:05d}.npz" for index in range(5)
    ]  # no temporary files left behind
    # One incoming batch plus less than a shard: memory stays bounded.
    assert writer.peak_buffered_instances < 20 + 45

    reader = ShardReader(tmp_path)
    assert (reader.num_instances, reader.sequence_length, reader.masked) == (83, LENGTH, True)
    assert reader.max_predictions_per_seq == PREDICTIONS
    batches = list(reader.batches(16))
    assert [len(batch["token_ids"]) for batch in batches] == [16, 16, 16, 16, 16, 3]
    batch = batches[0]
    assert {name: value.dtype for name, value in batch.items()} == {
        "token_ids": np.int32,
        "segment_ids": np.int32,
        "padding_mask": np.bool_,
        "nsp_labels": np.int32,
        "mask_positions": np.int32,
        "mask_ids": np.int32,
        "mask_weights": np.float32,
    }
    read = {name: np.concatenate([batch[name] for batch in batches]) for name in batch}
    for name in ("token_ids", "nsp_labels", "mask_positions", "mask_ids", "mask_weights"):
        np.testing.assert_array_equal(read[name], written[name])
    np.testing.assert_array_equal(read["segment_ids"], written["segment_ids"])
    np.testing.assert_array_equal(read["padding_mask"].sum(axis=1), written["lengths"])
    assert [len(batch["token_ids"]) for batch in reader.batches(16, drop_remainder=True)] == [
        16
    ] * 5


def test_shuffled_reading_is_a_seeded_permutation(tmp_path):
    write_dataset(tmp_path, [50, 50], instances_per_shard=30)
    reader = ShardReader(tmp_path)

    def order(seed):
        return np.concatenate(
            [batch["token_ids"][:, 1] for batch in reader.batches(8, shuffle=True, seed=seed)]
        )

    first = order(1)
    assert sorted(first) == list(range(100))
    assert not np.array_equal(first, np.arange(100))
    np.testing.assert_array_equal(first, order(1))
    assert not np.array_equal(first, order(2))


def test_unmasked_data_has_no_mask_arrays(tmp_path):
    write_dataset(tmp_path, [10], instances_per_shard=4, masked=False)
    reader = ShardReader(tmp_path)
    assert not reader.masked and reader.max_predictions_per_seq is None
    batch = next(reader.batches(4))
    assert set(batch) == {"token_ids", "segment_ids", "padding_mask", "nsp_labels"}


def test_writer_refuses_existing_data_and_inconsistent_batches(tmp_path):
    write_dataset(tmp_path / "done", [5], instances_per_shard=4)
    with pytest.raises(ValueError, match="already holds pretraining data"):
        ShardWriter(tmp_path / "done")
    writer = ShardWriter(tmp_path / "new", instances_per_shard=4)
    with pytest.raises(ValueError, match="same first dimension"):
        writer.write(
            {"token_ids": np.zeros((3, LENGTH), np.int32), "lengths": np.zeros(2, np.int32)}
        )
    writer.write(instance_batch(2))
    with pytest.raises(ValueError, match="arrays of the first one"):
        writer.write(instance_batch(2, masked=False))
    with pytest.raises(ValueError, match="instances_per_shard"):
        ShardWriter(tmp_path / "other", instances_per_shard=0)
    with pytest.raises(ValueError, match="No instances"):
        ShardWriter(tmp_path / "empty").close()


def test_an_interrupted_write_leaves_no_manifest(tmp_path):
    with pytest.raises(RuntimeError):
        with ShardWriter(tmp_path, instances_per_shard=4) as writer:
            writer.write(instance_batch(9))
            raise RuntimeError("cancelled")
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "shard-00000.npz",
        "shard-00001.npz",
    ]
    with pytest.raises(ValueError, match="no manifest.json"):
        ShardReader(tmp_path)


def test_reader_names_the_broken_shard(tmp_path):
    write_dataset(tmp_path, [10], instances_per_shard=4)
    shard = tmp_path / "shard-00001.npz"
    arrays = dict(np.load(shard))
    arrays["token_ids"] = arrays["token_ids"].astype(np.int64)
    np.savez(shard, **arrays)
    with pytest.raises(ValueError, match=r"shard-00001.npz: array 'token_ids' should be int32"):
        list(ShardReader(tmp_path).batches(4))

    np.savez(shard, token_ids=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="shard-00001.npz cannot be read"):
        list(ShardReader(tmp_path).batches(4))

    shard.unlink()
    with pytest.raises(ValueError, match="shard-00001.npz listed in manifest.json is missing"):
        list(ShardReader(tmp_path).batches(4))

    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    manifest["shards"][0]["file"] = "../escape.npz"
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ValueError, match="bad shard entry"):
        ShardReader(tmp_path)


def test_vocabulary_fingerprint_tells_tokenizers_apart(tmp_path):
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "cat", "sat"]
    tokenizer = BertTokenizer(vocabulary)
    metadata = {"vocabulary": {"fingerprint": vocabulary_fingerprint(tokenizer)}}
    write_dataset(tmp_path, [3], instances_per_shard=4, metadata=metadata)
    reader = ShardReader(tmp_path)
    reader.check_vocabulary(BertTokenizer(list(vocabulary)))
    with pytest.raises(ValueError, match="another vocabulary"):
        reader.check_vocabulary(BertTokenizer(vocabulary + ["mat"]))
    with pytest.raises(ValueError, match="another vocabulary"):
        reader.check_vocabulary(BertTokenizer(vocabulary, lowercase=False))


# --- ShardDataset: the batches of a run, read ahead in a thread ----------------------------


def _reference_batches(reader, batch_size, seed, epochs):
    """Batches of `epochs` epochs, read in the main thread, as ShardDataset promises."""
    batches = []
    for epoch in range(epochs):
        batches += list(reader.batches(batch_size, shuffle=True, seed=[seed, epoch],
                                       drop_remainder=True))
    return batches


def test_shard_dataset_reads_ahead_the_batches_of_the_run_and_its_shares(tmp_path):
    from kbert.pretraining.shard_dataset import ShardDataset

    folder = tmp_path / "shards"
    write_dataset(folder, [23], instances_per_shard=5)
    reader = ShardReader(folder)
    expected = _reference_batches(reader, 4, seed=7, epochs=3)  # 5 batches an epoch
    dataset = ShardDataset(reader, 4, 12, start=2, seed=7, prefetch=3)
    assert len(dataset) == 12
    found = [dataset[index] for index in range(12)]  # across two epoch boundaries
    for batch, reference in zip(found, expected[2:14]):
        assert batch.keys() == reference.keys()
        for name in batch:
            np.testing.assert_array_equal(batch[name], reference[name])
    # A jump (TensorFlow peeks at batch 0, then starts again) restarts the reading.
    np.testing.assert_array_equal(dataset[5]["token_ids"], expected[7]["token_ids"])
    np.testing.assert_array_equal(dataset[0]["token_ids"], expected[2]["token_ids"])
    np.testing.assert_array_equal(dataset[1]["token_ids"], expected[3]["token_ids"])
    dataset.close()
    with pytest.raises(IndexError):
        dataset[12]
    # Two processes feed the two halves of every global batch.
    halves = [ShardDataset(reader, 4, 3, seed=7, share=(index, 2)) for index in range(2)]
    for number in range(3):
        joined = np.concatenate([half[number]["token_ids"] for half in halves])
        np.testing.assert_array_equal(joined, expected[number]["token_ids"])
    with pytest.raises(ValueError, match="share=\\(0, 3\\), batch_size=4"):
        ShardDataset(reader, 4, 3, share=(0, 3))


def test_shard_dataset_hands_reading_errors_to_the_caller(tmp_path):
    from kbert.pretraining.shard_dataset import ShardDataset

    folder = tmp_path / "shards"
    write_dataset(folder, [12], instances_per_shard=4)
    reader = ShardReader(folder)
    dataset = ShardDataset(reader, 4, 3, shuffle=False)
    (folder / reader.manifest["shards"][2]["file"]).unlink()
    dataset[0], dataset[1]
    with pytest.raises(ValueError, match="missing"):
        dataset[2]
