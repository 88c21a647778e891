"""`kbert fill-mask`, `kbert qa`, `kbert classify`, `kbert tag` on tiny presets."""

import json

import pytest

from inference_helpers import shared_backbone
from inference_helpers import make_tokenizer
from kbert.cli import main
from kbert.models import BertClassifier
from kbert.models import BertMaskedLM
from kbert.models import BertQuestionAnswerer
from kbert.models import BertTokenClassifier


@pytest.fixture(scope="module")
def presets(tmp_path_factory):
    """One preset folder per task, sharing a tiny random backbone and the vocabulary."""
    root = tmp_path_factory.mktemp("cli_inference")
    tokenizer = make_tokenizer(root)
    backbone = shared_backbone()
    models = {
        "fill-mask": BertMaskedLM(backbone),
        "qa": BertQuestionAnswerer(backbone),
        "classify": BertClassifier(backbone, label_names=["negative", "positive"]),
        "tag": BertTokenClassifier(backbone, label_names=["O", "B-LOC", "I-LOC"]),
    }
    folders = {}
    for command, model in models.items():
        folders[command] = str(root / command)
        model.save_to_preset(folders[command], tokenizer=tokenizer)
    return folders


def _json_lines(output):
    return [json.loads(line) for line in output.splitlines()]


def test_every_command_has_help(capsys):
    for command in ("fill-mask", "qa", "classify", "tag"):
        with pytest.raises(SystemExit) as exit_info:
            main([command, "--help"])
        assert exit_info.value.code == 0
        help_text = capsys.readouterr().out
        assert "--json" in help_text and "--model" in help_text and "--file" in help_text


def test_fill_mask_prints_candidates(presets, capsys, tmp_path):
    texts = ["The [MASK] sat.", "a [MASK] ran to [MASK]"]
    assert main(["fill-mask", "--model", presets["fill-mask"], "--top-k", "2", *texts]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == texts[0] and lines[1] == "  [MASK] at 4:10"
    assert len(lines) == 2 * (1 + 1 + 2) + 1 + 2  # texts, masks, candidates

    # Many inputs from a file: JSON Lines in order, and a progress bar on stderr.
    lines = [f"the cat number {index} [MASK] ." for index in range(20)]
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(lines[:10]) + "\n\n" + "\n".join(lines[10:]) + "\n", encoding="utf-8")
    command = ["fill-mask", "--model", presets["fill-mask"], "--json", "--file", str(path)]
    assert main(command + ["--targets", "cat, dog", "--batch-size", "8"]) == 0
    captured = capsys.readouterr()
    records = _json_lines(captured.out)
    assert [record["text"] for record in records] == lines
    for record in records:
        (mask,) = record["masks"]
        assert record["text"][mask["start"] : mask["end"]] == "[MASK]"
        assert sorted(c["token"] for c in mask["candidates"]) == ["cat", "dog"]
    assert "fill-mask" in captured.err and "20/20" in captured.err


def test_fill_mask_on_a_long_text_shows_a_window_around_each_mask(presets, capsys):
    # The tokenizer skips the spaces, so the mask is within the tiny model's limit.
    before, after = " " * 500 + "the cat sat on ", " , the dog ran" * 200
    text = before + "[MASK]" + after
    assert main(["fill-mask", "--model", presets["fill-mask"], "--top-k", "2", text]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(f"... ({len(text)} characters)") and len(lines[0]) < 200
    assert lines[1] == f"  [MASK] at {len(before)}:{len(before) + 6}"
    for line in lines[2:]:  # the candidates: 40 characters either side of the filled word
        word = line.split()[1].removeprefix("##")
        assert line.endswith(f"...{before[-40:]}{word}{after[:40]}..."), line
    assert len(lines) == 4


def test_fill_mask_errors(presets, capsys):
    assert main(["fill-mask", "--model", presets["fill-mask"], "no mask here"]) == 1
    assert "kbert fill-mask: error:" in capsys.readouterr().err
    assert main(["fill-mask", "--model", presets["fill-mask"]]) == 1
    assert "Nothing to do" in capsys.readouterr().err
    assert main(["fill-mask", "--model", "no-such-preset", "a [MASK]"]) == 1
    assert "Unknown preset 'no-such-preset'" in capsys.readouterr().err


def test_qa_answers_questions(presets, capsys, tmp_path):
    context = "The cat sat on the mat and the dog ran to Paris. " * 4
    context_file = tmp_path / "context.txt"
    context_file.write_text(context, encoding="utf-8")
    command = ["qa", "--model", presets["qa"], "--question", "Who sat?", "--question", "Where?"]
    assert main(command + ["--context-file", str(context_file), "--top-k", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if line.startswith("Q: ")] == ["Q: Who sat?", "Q: Where?"]
    assert len(lines) == 6

    questions = tmp_path / "questions.jsonl"
    records = [
        {"id": "a", "question": "Who sat?", "context": context},
        {"id": "b", "question": "Who?", "context": "   "},
        {"question": "Where did the dog run?", "context": "Paris , France"},
    ]
    questions.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    assert main(["qa", "--model", presets["qa"], "--json", "--file", str(questions)]) == 0
    results = _json_lines(capsys.readouterr().out)
    assert [result.get("id") for result in results] == ["a", "b", None]
    assert results[1]["is_impossible"] and results[1]["answers"] == []
    for record, result in zip(records, results):
        for answer in result["answers"]:
            assert record["context"][answer["start"] : answer["end"]] == answer["text"]


def test_qa_errors(presets, capsys, tmp_path):
    assert main(["qa", "--model", presets["qa"], "--question", "Who?"]) == 1
    assert "--question needs a context" in capsys.readouterr().err
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"question": "Who?", "context": "x"}\n{"question": "Who?"}\n', encoding="utf-8"
    )
    assert main(["qa", "--model", presets["qa"], "--file", str(path)]) == 1
    assert f"{path}:2: the field `context` is missing" in capsys.readouterr().err


def test_classify_texts_and_pairs(presets, capsys, tmp_path):
    command = ["classify", "--model", presets["classify"]]
    assert main(command + ["the cat sat", "a dog", "--pair", "who?", "--pair", "what?"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].endswith("\tthe cat sat ||| who?")
    assert lines[0].split("\t")[0] in ("negative", "positive")

    path = tmp_path / "pairs.jsonl"
    path.write_text('{"text": "the cat", "pair": "sat"}\n{"text": "a dog", "pair": "ran"}\n')
    assert main(command + ["--json", "--file", str(path)]) == 0
    results = _json_lines(capsys.readouterr().out)
    assert [result["pair"] for result in results] == ["sat", "ran"]
    assert set(results[0]["probabilities"]) == {"negative", "positive"}
    assert main(command + ["the cat", "--file", str(path)]) == 1
    assert "Either every input is a text pair or none is" in capsys.readouterr().err


def test_tag_prints_entities(presets, capsys):
    texts = ["The cat ran to  PARIS , France .", "北京 Café naïve", ""]
    assert main(["tag", "--model", presets["tag"], "--json", *texts]) == 0
    results = _json_lines(capsys.readouterr().out)
    assert [result["text"] for result in results] == texts
    for result in results:
        for entity in result["entities"]:
            assert result["text"][entity["start"] : entity["end"]] == entity["text"]
            assert entity["label"] == "LOC"
    assert main(["tag", "--model", presets["tag"], texts[0]]) == 0
    assert capsys.readouterr().out.splitlines()[0] == texts[0]
