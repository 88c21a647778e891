"""Multiple choice through the command line: `finetune`, `evaluate` and `choose`."""

import csv
import json

import numpy as np
import pytest
from fine_tuning_data import make_tiny_preset
from fine_tuning_data import swag_rows
from fine_tuning_data import write_swag

from kbert.cli import main
from kbert.models import BertMultipleChoice

# Chance is 0.25 (four endings); the rule (a positive word in the right ending) is
# read from each ending alone, which the tiny model learns in a few epochs.
ACCURACY_THRESHOLD = 0.8


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model fine-tuned through `kbert finetune --task multiple-choice`, and its dev file."""
    folder = tmp_path_factory.mktemp("swag")
    preset = str(make_tiny_preset(folder / "preset"))
    train = write_swag(folder / "train.csv", swag_rows(320, seed=1))
    dev = write_swag(folder / "dev.csv", swag_rows(48, seed=2))
    arguments = [
        "finetune", "--task", "multiple-choice", "--model", preset, "--train", train,
        "--eval", dev, "--output", str(folder / "run"), "--epochs", "5",
        "--batch-size", "16", "--learning-rate", "2e-3", "--seed", "0",
    ]
    assert main(arguments) == 0
    return folder / "run" / "model", dev


def test_finetune_learns_the_rule_and_evaluate_scores_it(trained, capsys):
    model, dev = trained
    capsys.readouterr()
    assert main(["evaluate", "--task", "multiple-choice", "--model", str(model), "--data", dev,
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["examples"] == 48
    assert report["metrics"]["accuracy"] >= ACCURACY_THRESHOLD


def test_columns_of_other_names_are_read_through_the_column_flags(trained, tmp_path, capsys):
    model, dev = trained
    with open(dev, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    # SWAG's sent2 joined to every ending: whole endings, and renamed columns.
    header = rows[0]
    start, first_ending = header.index("sent2"), header.index("ending0")
    renamed = {"sent1": "premise", "label": "answer", "sent2": "unused"}
    whole = [[renamed.get(name, name) for name in header]]
    for row in rows[1:]:
        row = list(row)
        for index in range(first_ending, first_ending + 4):
            row[index] = f"{row[start]} {row[index]}"
        row[start] = ""
        whole.append(row)
    renamed_file = tmp_path / "renamed.csv"
    with open(renamed_file, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(whole)
    evaluate = ["evaluate", "--task", "multiple-choice", "--model", str(model), "--json"]
    capsys.readouterr()
    assert main(evaluate + ["--data", dev]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert main(evaluate + ["--data", str(renamed_file), "--context-column", "premise",
                            "--start-column", "", "--label-column", "answer"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"] == expected["metrics"]
    # Without the flags the file is refused by the missing SWAG column's name.
    assert main(evaluate + ["--data", str(renamed_file)]) == 1
    assert "sent1" in capsys.readouterr().err
    # The flags belong to multiple choice.
    assert main(["evaluate", "--task", "classification", "--model", str(model), "--data", dev,
                 "--context-column", "premise"]) == 1
    assert "are for --task multiple-choice" in capsys.readouterr().err


def test_choose_agrees_with_the_saved_model(trained, capsys):
    model_folder, _ = trained
    context = "the dog sat near the old house"
    endings = ["ran on the road", "sat with a great cat", "sat under a big tree"]
    capsys.readouterr()
    assert main(["choose", "--model", str(model_folder), "--context", context, *endings,
                 "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    model = BertMultipleChoice.from_preset(model_folder)
    expected = model.choose(context, endings)
    assert printed["index"] == expected.index == 1  # the ending with the positive word
    assert printed["ending"] == endings[1]
    np.testing.assert_allclose(printed["probabilities"], expected.probabilities, atol=1e-6)

    assert main(["choose", "--model", str(model_folder), "--context", context, *endings]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == context and lines[2].startswith("* 1\t")


def test_choose_errors_are_one_line(trained, capsys):
    model_folder, _ = trained
    assert main(["choose", "--model", str(model_folder), "--context", "a cat", "only one"]) == 1
    error = capsys.readouterr().err.strip()
    assert "at least two ENDING" in error and "\n" not in error


def test_finetune_names_the_bad_line_of_the_training_file(tmp_path, capsys):
    rows = swag_rows(4, seed=3)
    rows[2] = rows[2][:7] + ("",) + rows[2][8:]  # ending1 of the row on line 4 is empty
    train = write_swag(tmp_path / "train.csv", rows)
    preset = str(make_tiny_preset(tmp_path / "preset"))
    arguments = ["finetune", "--task", "multiple-choice", "--model", preset, "--train", train,
                 "--output", str(tmp_path / "run")]
    assert main(arguments) == 1
    error = capsys.readouterr().err.strip().splitlines()[-1]  # after the precision line
    assert error == f"kbert finetune: error: {train}:4: empty ending in column 'ending1'."
