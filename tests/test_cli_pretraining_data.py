"""`kbert vocab` and `kbert create-pretraining-data`: text files to shards a BertPretrainer eats."""

import json
import shutil

import numpy as np
import pytest

from kbert.cli import main
from kbert.models import BertPretrainer
from kbert.pretraining import DynamicMasking, ShardReader
from kbert.tokenizer import BertTokenizer

SUBJECTS = ["Mr. Darcy", "Mrs. Bennet", "Elizabeth", "The rector", "Dr. Jones", "Her sister"]
VERBS = ["walked to", "wrote to", "laughed at", "danced with", "visited", "talked of"]
OBJECTS = ["the garden", "Netherfield", "the ball", "a letter", "London", "the officers"]


@pytest.fixture(scope="module")
def paragraphs_file(tmp_path_factory):
    """Plain paragraphs (several sentences per line), chapters set apart by 2 blank lines."""
    rng = np.random.default_rng(0)
    chapters = []
    for _ in range(40):
        paragraphs = []
        for _ in range(int(rng.integers(2, 6))):
            sentences = [
                f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}."
                for _ in range(int(rng.integers(1, 5)))
            ]
            paragraphs.append(" ".join(sentences))
        chapters.append("\n\n".join(paragraphs))
    path = tmp_path_factory.mktemp("text") / "novel.txt"
    path.write_text("\n\n\n".join(chapters) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def vocabulary_folder(paragraphs_file, tmp_path_factory):
    folder = tmp_path_factory.mktemp("vocab") / "vocab"
    assert (
        main(
            [
                "vocab",
                "--output",
                str(folder),
                "--size",
                "200",
                "--unused",
                "2",
                str(paragraphs_file),
            ]
        )
        == 0
    )
    return folder


def test_vocab_command_writes_a_tokenizer_preset(
    vocabulary_folder, paragraphs_file, tmp_path, capsys
):
    tokenizer = BertTokenizer.from_preset(vocabulary_folder)
    assert tokenizer.vocabulary[:7] == [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        "[unused0]",
        "[unused1]",
    ]
    assert tokenizer.lowercase and "darcy" in tokenizer.vocabulary
    # A second run refuses to replace the vocabulary unless told to.
    folder = tmp_path / "vocab"
    shutil.copytree(vocabulary_folder, folder)
    capsys.readouterr()
    arguments = ["vocab", "--output", str(folder), "--size", "200", str(paragraphs_file)]
    assert main(arguments) == 1
    assert "--overwrite" in capsys.readouterr().err
    assert main(arguments + ["--overwrite", "--cased"]) == 0
    assert "(cased)" in capsys.readouterr().out
    assert not BertTokenizer.from_preset(folder).lowercase


def test_create_pretraining_data_feeds_the_pretrainer(
    vocabulary_folder, paragraphs_file, tmp_path, capsys
):
    output = tmp_path / "data"
    arguments = [
        "create-pretraining-data",
        "--input", str(paragraphs_file),
        "--vocab", str(vocabulary_folder),
        "--output", str(output),
        "--max-seq-length", "24",
        "--max-predictions-per-seq", "5",
        "--dupe-factor", "3",
        "--split-sentences",
        "--document-break", "2",
        "--whole-word-masking",
        "--instances-per-shard", "100",
        "--seed", "7",
    ]  # fmt: skip
    assert main(arguments) == 0
    captured = capsys.readouterr()
    manifest = json.loads((output / "manifest.json").read_text(encoding="utf-8"))
    assert f"Wrote {manifest['num_instances']} instances from 40 documents" in captured.out
    assert "instances: 100%" in captured.err  # the progress bar
    assert manifest["settings"]["whole_word_masking"] and manifest["settings"]["split_sentences"]
    assert manifest["settings"]["max_seq_length"] == 24 and manifest["settings"]["seed"] == 7
    assert len(manifest["shards"]) == -(-manifest["num_instances"] // 100)
    assert not [path for path in output.iterdir() if path.name.startswith(".")]  # cache removed

    tokenizer = BertTokenizer.from_preset(vocabulary_folder)
    reader = ShardReader(output)
    reader.check_vocabulary(tokenizer)
    batch = next(reader.batches(8, shuffle=True, seed=0))
    # BertPretrainer's inputs and targets (building a model here costs 7 s on JAX).
    for name in ("token_ids", "segment_ids", "padding_mask", *BertPretrainer.extra_inputs):
        assert batch[name].shape == ((8, 5) if name == "mask_positions" else (8, 24))
    assert batch["mask_ids"].shape == batch["mask_weights"].shape == (8, 5)
    assert batch["nsp_labels"].shape == (8,)
    assert (batch["mask_ids"] < tokenizer.vocabulary_size).all()

    # The same output folder is refused: nothing is overwritten.
    assert main(arguments) == 1
    assert "already holds pretraining data" in capsys.readouterr().err


def test_dynamic_masking_data_is_stored_unmasked(vocabulary_folder, paragraphs_file, tmp_path):
    output = tmp_path / "unmasked"
    assert main([
        "create-pretraining-data", "--input", str(paragraphs_file), "--vocab",
        str(vocabulary_folder / "vocab.txt"), "--output", str(output), "--max-seq-length", "32",
        "--dupe-factor", "1", "--split-sentences", "--dynamic-masking", "--no-progress",
    ]) == 0  # fmt: skip
    reader = ShardReader(output)
    assert not reader.masked
    batch = next(reader.batches(16))
    masking = DynamicMasking.from_tokenizer(
        BertTokenizer.from_preset(vocabulary_folder), max_predictions_per_seq=6, seed=1
    )
    # The host-side rule; the in-graph one is tested in test_pretraining_masking.py.
    masked = masking.mask_numpy(batch["token_ids"], np.random.default_rng(0))
    assert masked["mask_positions"].shape == (16, 6)
    assert (masked["mask_weights"].sum(axis=1) >= 1).all()


def test_create_pretraining_data_reports_input_errors(
    vocabulary_folder, paragraphs_file, tmp_path, capsys
):
    common = [
        "create-pretraining-data",
        "--vocab",
        str(vocabulary_folder),
        "--output",
        str(tmp_path / "x"),
    ]
    assert main(common + ["--input", str(tmp_path / "missing.txt")]) == 1
    assert "missing.txt" in capsys.readouterr().err
    assert main(common + ["--input", str(paragraphs_file), "--cased"]) == 1
    assert "--cased" in capsys.readouterr().err
    assert main(common + ["--input", str(paragraphs_file), "--max-seq-length", "3"]) == 1
    assert "max_seq_length" in capsys.readouterr().err


def test_help_lists_the_pretraining_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = capsys.readouterr().out
    assert "vocab" in help_text and "create-pretraining-data" in help_text
