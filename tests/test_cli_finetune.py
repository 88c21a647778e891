"""`kbert finetune` and `kbert evaluate`, run in-process through `kbert.cli.main`."""

import csv
import json

import pytest
from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset
from fine_tuning_data import qa_examples
from fine_tuning_data import token_classification_examples

from kbert.cli import main

SMALL_MODEL = dict(
    hidden_size=32, num_layers=1, num_heads=2, intermediate_size=48, max_positions=32
)


def _write_csv(path, examples):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["sentence", "label"])
        for example in examples:
            writer.writerow([example.text, example.label])
    return str(path)


def _write_conll(path, examples):
    blocks = ["\n".join(f"{token} {tag}" for token, tag in zip(e.tokens, e.tags)) for e in examples]
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return str(path)


def _write_squad(path, examples):
    paragraphs = [
        {
            "context": example.context,
            "qas": [
                {
                    "id": example.id,
                    "question": example.question,
                    "answers": [{"text": a.text, "answer_start": a.start} for a in example.answers],
                }
            ],
        }
        for example in examples
    ]
    path.write_text(
        json.dumps({"data": [{"title": "t", "paragraphs": paragraphs}]}), encoding="utf-8"
    )
    return str(path)


def _classification_run(preset, train, output):
    """`kbert finetune` arguments of a classification run on a "sentence" column."""
    return [
        "finetune",
        "--task",
        "classification",
        "--model",
        preset,
        "--train",
        train,
        "--output",
        str(output),
        "--text-column",
        "sentence",
    ]


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    return str(make_tiny_preset(tmp_path_factory.mktemp("cli") / "preset", **SMALL_MODEL))


def test_finetune_then_evaluate(preset, tmp_path, capsys):
    train = _write_csv(tmp_path / "train.csv", classification_examples(32, seed=1))
    dev = _write_csv(tmp_path / "dev.csv", classification_examples(8, seed=2))
    output = tmp_path / "run"
    arguments = _classification_run(preset, train, output) + [
        "--eval",
        dev,
        "--epochs",
        "2",
        "--batch-size",
        "8",
        "--learning-rate",
        "1e-3",
        "--json",
    ]
    assert main(arguments) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["status"] == "completed" and result["global_step"] == 8
    assert result["metric"] == "accuracy" and result["best_epoch"] in (1, 2)
    assert result["preset_path"] == str(output / "model")
    assert [entry["epoch"] for entry in result["history"]] == [1, 2]
    assert "fine-tuning" in captured.err and "epoch 2: loss" in captured.err

    # Resuming a finished run trains no further and reports the same result.
    assert main(arguments + ["--resume"]) == 0
    assert json.loads(capsys.readouterr().out)["global_step"] == 8

    evaluate = [
        "evaluate",
        "--task",
        "classification",
        "--model",
        str(output / "model"),
        "--data",
        dev,
        "--text-column",
        "sentence",
    ]
    assert main(evaluate + ["--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["examples"] == 8
    assert set(scores["metrics"]) == {"accuracy", "macro_f1", "matthews_corrcoef"}
    assert scores["metrics"]["accuracy"] == pytest.approx(result["best_metric"])
    assert main(evaluate) == 0
    table = capsys.readouterr().out
    assert "classification on" in table and "accuracy" in table


def test_an_evaluation_label_unseen_in_training_is_an_error(preset, tmp_path, capsys):
    train = _write_csv(tmp_path / "train.csv", classification_examples(8, seed=1))
    dev_examples = classification_examples(4, seed=2)
    dev_examples[1] = type(dev_examples[1])("a cat", None, "neutral", 3)
    dev = _write_csv(tmp_path / "dev.csv", dev_examples)
    status = main(_classification_run(preset, train, tmp_path / "run") + ["--eval", dev])
    assert status == 1
    error = capsys.readouterr().err
    assert "dev.csv, line 3: label 'neutral' does not occur in the training data" in error
    assert not (tmp_path / "run").exists()


def test_a_training_file_with_a_single_class_is_refused(preset, tmp_path, capsys):
    examples = classification_examples(8, seed=1)
    one_class = [type(example)(example.text, None, "x", example.line) for example in examples]
    train = _write_csv(tmp_path / "train.csv", one_class)
    status = main(_classification_run(preset, train, tmp_path / "run"))
    assert status == 1
    error = capsys.readouterr().err
    assert f"{train} has a single label, 'x', in column 'label'" in error
    assert "needs at least two classes" in error
    assert not (tmp_path / "run").exists()


def test_evaluate_token_classification_and_qa_files(tmp_path, capsys):
    from kbert.models import BertBackbone
    from kbert.models import BertQuestionAnswerer
    from kbert.models import BertTokenClassifier
    from kbert.tokenizer import BertTokenizer

    preset = make_tiny_preset(tmp_path / "preset", **SMALL_MODEL)
    backbone = BertBackbone.from_preset(preset)
    tokenizer = BertTokenizer.from_preset(preset)
    tags = ["O", "B-LOC", "B-PER", "I-PER"]
    BertTokenClassifier(backbone, label_names=tags).save_to_preset(tmp_path / "tagger", tokenizer)
    conll = _write_conll(tmp_path / "dev.conll", token_classification_examples(6, seed=4))
    assert (
        main(
            [
                "evaluate",
                "--task",
                "token-classification",
                "--model",
                str(tmp_path / "tagger"),
                "--data",
                conll,
                "--json",
            ]
        )
        == 0
    )
    scores = json.loads(capsys.readouterr().out)
    assert scores["examples"] == 6 and set(scores["metrics"]) == {"precision", "recall", "f1"}

    BertQuestionAnswerer(backbone).save_to_preset(tmp_path / "reader", tokenizer)
    squad = _write_squad(tmp_path / "dev.json", qa_examples(3, seed=4, max_sentences=5))
    assert (
        main(
            [
                "evaluate",
                "--task",
                "qa",
                "--model",
                str(tmp_path / "reader"),
                "--data",
                squad,
                "--doc-stride",
                "16",
                "--json",
            ]
        )
        == 0
    )
    scores = json.loads(capsys.readouterr().out)
    assert scores["examples"] == 3 and set(scores["metrics"]) == {"exact_match", "f1"}


def test_help_and_argument_errors(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["finetune", "--help"])
    assert exit_info.value.code == 0
    assert "--gradient-accumulation" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(
            ["finetune", "--task", "summarization", "--model", "m", "--train", "t", "--output", "o"]
        )
    assert "invalid choice" in capsys.readouterr().err
