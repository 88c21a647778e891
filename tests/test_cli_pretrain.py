"""`kbert pretrain` and `kbert evaluate-pretraining` end to end, in-process."""

import json

import pytest
from pretraining_helpers import make_shards

from kbert.cli import main


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    shards, _ = make_shards(folder)
    return folder, shards


def last_json(output):
    return json.loads(output.strip().splitlines()[-1])


def test_pretrain_then_evaluate(corpus, tmp_path, capsys):
    vocabulary, shards = corpus
    arguments = [
        "pretrain",
        "--data",
        str(shards),
        "--eval-data",
        str(shards),
        "--output",
        str(tmp_path / "run"),
        "--size",
        "tiny",
        "--vocab",
        str(vocabulary),
        "--steps",
        "3",
        "--batch-size",
        "8",
        "--warmup-steps",
        "1",
        "--optimizer",
        "lamb",
        "--checkpoint-every",
        "2",
        "--json",
        "--no-progress",
    ]
    assert main(arguments) == 0
    captured = capsys.readouterr()
    report = last_json(captured.out)
    assert report["status"] == "completed" and report["global_step"] == 3
    # The default precision is "auto", and the command says what it chose (CPU: float32).
    assert "precision: auto: float32" in captured.err
    assert set(report["eval_metrics"]) >= {"mlm_loss", "mlm_accuracy", "nsp_accuracy"}
    preset = tmp_path / "run" / "model"
    assert (preset / "vocab.txt").is_file() and (preset / "config.json").is_file()

    # Resuming a finished run trains nothing more and saves the same model again.
    assert main(arguments + ["--resume"]) == 0
    assert last_json(capsys.readouterr().out)["global_step"] == 3

    assert (
        main(
            [
                "evaluate-pretraining",
                "--model",
                str(preset),
                "--data",
                str(shards),
                "--batch-size",
                "16",
                "--json",
            ]
        )
        == 0
    )
    scores = last_json(capsys.readouterr().out)
    assert 0.0 <= scores["mlm_accuracy"] <= 1.0 and 0.0 <= scores["nsp_accuracy"] <= 1.0
    assert scores["instances"] > 0

    assert (
        main(
            [
                "pretrain",
                "--data",
                str(shards),
                "--output",
                str(tmp_path / "adapted"),
                "--init-from",
                str(preset),
                "--steps",
                "1",
                "--batch-size",
                "8",
                "--warmup-steps",
                "0",
                "--no-progress",
            ]
        )
        == 0
    )
    assert "Saved the model and tokenizer" in capsys.readouterr().out


def test_pretrain_reports_user_errors(corpus, tmp_path, capsys):
    _, shards = corpus
    assert (
        main(
            [
                "pretrain",
                "--data",
                str(shards),
                "--output",
                str(tmp_path / "run"),
                "--size",
                "tiny",
            ]
        )
        == 1
    )
    assert "--size needs --vocab" in capsys.readouterr().err
    assert (
        main(
            [
                "pretrain",
                "--data",
                str(tmp_path),
                "--output",
                str(tmp_path / "run"),
                "--init-from",
                "nowhere",
            ]
        )
        == 1
    )
    assert "manifest.json" in capsys.readouterr().err


def test_dropout_sets_the_new_models_dropout_and_only_its(corpus, tmp_path, capsys):
    vocabulary, shards = corpus
    arguments = ["pretrain", "--data", str(shards), "--steps", "1", "--batch-size", "8",
                 "--warmup-steps", "0", "--no-progress"]
    new_model = ["--size", "tiny", "--vocab", str(vocabulary)]
    output = tmp_path / "run"
    assert main(arguments + new_model + ["--output", str(output), "--dropout", "0"]) == 0
    config = json.loads((output / "model" / "config.json").read_text())
    assert config["backbone"]["hidden_dropout"] == config["backbone"]["attention_dropout"] == 0
    capsys.readouterr()
    for wrong, message in [
        (["--dropout", "1.5"] + new_model, "--dropout must be in [0, 1). Received: 1.5"),
        (["--dropout", "0", "--init-from", str(output / "model")], "--dropout goes with --size"),
    ]:
        assert main(arguments + ["--output", str(tmp_path / "wrong")] + wrong) == 1
        error = capsys.readouterr().err
        assert message in error and "Traceback" not in error


def test_distributed_joins_the_run_through_keras_distribution(corpus, tmp_path, capsys,
                                                               monkeypatch):
    import keras

    vocabulary, shards = corpus
    joined = []
    monkeypatch.setattr(keras.distribution, "initialize", lambda: joined.append(True))
    arguments = [
        "pretrain", "--data", str(shards), "--output", str(tmp_path / "run"),
        "--size", "tiny", "--vocab", str(vocabulary), "--steps", "1", "--batch-size", "8",
        "--warmup-steps", "0", "--distributed", "--json", "--no-progress",
    ]
    if keras.backend.backend() != "jax":
        assert main(arguments) == 1
        assert "needs the JAX backend" in capsys.readouterr().err
        assert not joined
        return
    # One process here (the real two-process run: test_distributed_pretraining.py).
    assert main(arguments) == 0
    assert joined == [True]
    report = last_json(capsys.readouterr().out)
    assert report["status"] == "completed" and report["global_step"] == 1
