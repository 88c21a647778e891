"""`kbert evaluate --predictions` and `FineTuningRecipe.evaluation_predictions`: every example
with gold and prediction, and the scores computed from the same rows."""

import csv
import json

import numpy as np
import pytest
from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset
from fine_tuning_data import multiple_choice_examples
from fine_tuning_data import qa_examples
from fine_tuning_data import swag_rows
from fine_tuning_data import token_classification_examples
from fine_tuning_data import write_swag

from kbert.cli import main
from kbert.finetuning import make_recipe
from kbert.metrics import accuracy
from kbert.metrics import entity_scores

SMALL_MODEL = dict(
    hidden_size=32, num_layers=1, num_heads=2, intermediate_size=48, max_positions=32
)
TAGS = ["O", "B-LOC", "B-PER", "I-PER"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Untrained task models on one tiny backbone, saved as presets (a dict of folders)."""
    from kbert.models import BertBackbone
    from kbert.models import BertClassifier
    from kbert.models import BertMultipleChoice
    from kbert.models import BertQuestionAnswerer
    from kbert.models import BertTokenClassifier
    from kbert.tokenizer import BertTokenizer

    folder = tmp_path_factory.mktemp("predictions")
    preset = make_tiny_preset(folder / "preset", **SMALL_MODEL)
    backbone = BertBackbone.from_preset(preset)
    tokenizer = BertTokenizer.from_preset(preset)
    heads = {
        "classifier": BertClassifier(backbone, label_names=["neg", "pos"]),
        "tagger": BertTokenClassifier(backbone, label_names=TAGS),
        "reader": BertQuestionAnswerer(backbone),
        "chooser": BertMultipleChoice(backbone),
    }
    for name, model in heads.items():
        model.save_to_preset(folder / name, tokenizer)
    return {name: str(folder / name) for name in heads}


def _write_classification(path, examples):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows([example.text, example.label] for example in examples)
    return str(path)


def _evaluate(capsys, *arguments):
    assert main(["evaluate", *arguments, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["metrics"]


def _read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_classification_predictions_csv_agree_with_the_scores_and_classify(
    models, tmp_path, capsys
):
    from kbert.models import BertClassifier

    examples = classification_examples(9, seed=3)
    data = _write_classification(tmp_path / "dev.csv", examples)
    output = tmp_path / "predictions.csv"
    scores = _evaluate(
        capsys, "--task", "classification", "--model", models["classifier"], "--data", data,
        "--predictions", str(output), "--batch-size", "4",
    )
    with open(output, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == [
        "index", "line", "text", "gold", "predicted", "probability", "correct"
    ]
    assert [row["text"] for row in rows] == [example.text for example in examples]
    assert [row["gold"] for row in rows] == [example.label for example in examples]
    gold, predicted = [row["gold"] for row in rows], [row["predicted"] for row in rows]
    assert scores["accuracy"] == pytest.approx(accuracy(gold, predicted))
    assert [row["correct"] == "True" for row in rows] == [g == p for g, p in zip(gold, predicted)]

    # The sorted-batched rows equal one text at a time through the inference API.
    model = BertClassifier.from_preset(models["classifier"])
    results = [model.classify(example.text) for example in examples]
    assert predicted == [result.label for result in results]
    np.testing.assert_allclose(
        [float(row["probability"]) for row in rows],
        [result.probability for result in results],
        atol=1e-5,
    )

    predictions = make_recipe("classification").evaluation_predictions(model, examples)
    labels, counts = predictions.confusion_matrix()
    assert labels == ["neg", "pos"] and np.sum(counts) == len(examples)
    assert np.trace(counts) == sum(row["correct"] for row in predictions.rows)
    assert predictions.scores == make_recipe("classification").evaluate(model, examples)


def test_tagger_predictions_jsonl_hold_entities_and_per_type_scores(models, tmp_path, capsys):
    examples = token_classification_examples(7, seed=5)
    blocks = ["\n".join(f"{w} {t}" for w, t in zip(e.tokens, e.tags)) for e in examples]
    data = tmp_path / "dev.conll"
    data.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    output = tmp_path / "predictions.jsonl"
    scores = _evaluate(
        capsys, "--task", "token-classification", "--model", models["tagger"], "--data",
        str(data), "--predictions", str(output),
    )
    rows = _read_jsonl(output)
    assert [row["gold"] for row in rows] == [example.tags for example in examples]
    assert scores == pytest.approx(
        entity_scores([row["gold"] for row in rows], [row["predicted"] for row in rows])
    )
    for row, example in zip(rows, examples):
        assert len(row["predicted"]) == len(example.tokens)
        assert 0.0 < row["probability"] <= 1.0
        for entity_type, start, end, words in row["gold_entities"]:
            assert words == " ".join(example.tokens[start:end])
            assert example.tags[start] == f"B-{entity_type}"
        assert row["missed"] == [e for e in row["gold_entities"] if e not in row["predicted_entities"]]
        assert row["correct"] == (row["gold_entities"] == row["predicted_entities"])

    from kbert.models import BertTokenClassifier

    model = BertTokenClassifier.from_preset(models["tagger"])
    predictions = make_recipe("token-classification").evaluation_predictions(model, examples)
    assert {"LOC", "PER"} <= set(predictions.entity_types)
    support = sum(scores["support"] for scores in predictions.entity_types.values())
    assert support == sum(len(row["gold_entities"]) for row in rows)


def test_qa_predictions_score_every_question(models, tmp_path, capsys):
    examples = qa_examples(4, seed=6, max_sentences=4)
    paragraphs = [
        {
            "context": e.context,
            "qas": [{"id": e.id, "question": e.question,
                     "answers": [{"text": a.text, "answer_start": a.start} for a in e.answers]}],
        }
        for e in examples
    ]
    data = tmp_path / "dev.json"
    data.write_text(json.dumps({"data": [{"title": "t", "paragraphs": paragraphs}]}))
    output = tmp_path / "predictions.jsonl"
    scores = _evaluate(
        capsys, "--task", "qa", "--model", models["reader"], "--data", str(data),
        "--doc-stride", "16", "--predictions", str(output),
    )
    rows = _read_jsonl(output)
    assert [row["id"] for row in rows] == [example.id for example in examples]
    assert [row["gold"] for row in rows] == [[a.text for a in e.answers] for e in examples]
    assert scores["exact_match"] == pytest.approx(np.mean([row["exact_match"] for row in rows]))
    assert scores["f1"] == pytest.approx(np.mean([row["f1"] for row in rows]))
    for row in rows:
        assert row["predicted"] in row["context"]
        assert row["exact_match"] in (0.0, 100.0) and 0.0 <= row["f1"] <= 100.0


def test_multiple_choice_predictions_name_the_chosen_ending(models, tmp_path, capsys):
    data = write_swag(tmp_path / "dev.csv", swag_rows(6, seed=7))
    output = tmp_path / "predictions.csv"
    scores = _evaluate(
        capsys, "--task", "multiple-choice", "--model", models["chooser"], "--data", data,
        "--predictions", str(output),
    )
    with open(output, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    examples = multiple_choice_examples(6, seed=7)
    assert [int(row["gold"]) for row in rows] == [example.label for example in examples]
    for row, example in zip(rows, examples):
        assert json.loads(row["endings"]) == list(example.endings)
        assert row["predicted_ending"] == example.endings[int(row["predicted"])]
    correct = [row["gold"] == row["predicted"] for row in rows]
    assert scores["accuracy"] == pytest.approx(np.mean(correct))


def test_a_predictions_file_of_another_kind_is_refused_in_one_line(models, tmp_path, capsys):
    data = _write_classification(tmp_path / "dev.csv", classification_examples(2, seed=1))
    status = main(
        ["evaluate", "--task", "classification", "--model", models["classifier"], "--data",
         data, "--predictions", str(tmp_path / "predictions.xlsx")]
    )
    assert status == 1
    error = capsys.readouterr().err
    assert "must end in .csv or .jsonl" in error and error.count("\n") == 1
    assert not (tmp_path / "predictions.xlsx").exists()
