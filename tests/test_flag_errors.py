"""The command line's errors name the flag a setting has, and masked-LM fine-tuning takes
a training set smaller than a batch as every other task does."""

import argparse
import json

import pytest

from kbert.cli import main
from kbert.commands.config_arguments import add_config_arguments
from kbert.commands.config_arguments import name_flags
from kbert.pretraining import PretrainingConfig
from pretraining_helpers import make_shards


def test_a_setting_named_in_an_error_gets_its_flag():
    parser = argparse.ArgumentParser()
    add_config_arguments(parser.add_argument_group("a"), PretrainingConfig, fields=("steps",))
    add_config_arguments(
        parser.add_argument_group("b"),
        PretrainingConfig,
        fields=("warmup_steps", "gradient_accumulation_steps"),
    )
    args = parser.parse_args([])
    message = name_flags(
        "`warmup_steps` must not exceed `steps`; `gradient_accumulation_steps` and `seed` "
        "too. Received: warmup_steps=10, steps=5",
        args,
    )
    assert message == (
        "`warmup_steps` (--warmup-steps) must not exceed `steps` (--steps); "
        "`gradient_accumulation_steps` (--gradient-accumulation) and `seed` too. "
        "Received: warmup_steps=10, steps=5"
    )


def test_pretrain_steps_below_the_warmup_names_both_flags(tmp_path, capsys):
    status = main(
        ["pretrain", "--data", str(tmp_path), "--output", str(tmp_path / "run"),
         "--init-from", "demo-tiny", "--steps", "5"]
    )
    assert status == 1
    error = capsys.readouterr().err
    assert "`warmup_steps` (--warmup-steps) must not exceed `steps` (--steps)" in error


def test_pretraining_data_smaller_than_a_batch_names_batch_size(tmp_path, capsys):
    shards, _ = make_shards(tmp_path / "corpus", num_documents=4)
    status = main(
        ["pretrain", "--data", str(shards), "--output", str(tmp_path / "run"),
         "--size", "tiny", "--vocab", str(tmp_path / "corpus" / "vocab.txt"),
         "--steps", "1", "--warmup-steps", "0",
         "--batch-size", "100000", "--no-progress"]
    )
    assert status == 1
    assert "fewer than one batch: lower `batch_size` (--batch-size)" in capsys.readouterr().err


@pytest.mark.slow
def test_masked_lm_fine_tuning_takes_fewer_texts_than_a_batch(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    documents = ["The cat sat on the mat. The dog sat on the rug." for _ in range(3)]
    corpus.write_text("\n\n".join(documents) + "\n", encoding="utf-8")
    status = main(
        ["finetune", "--task", "masked-lm", "--model", "demo-tiny", "--train", str(corpus),
         "--output", str(tmp_path / "run"), "--batch-size", "32", "--max-length", "32",
         "--json"]
    )
    output = capsys.readouterr()
    assert status == 0, output.err
    assert json.loads(output.out.strip().splitlines()[-1])
