"""`kbert embed` on a tiny preset: files that parse and equal the API's result."""

import json

import numpy as np
import pytest

from inference_helpers import make_tokenizer
from inference_helpers import shared_backbone
from kbert.cli import build_parser
from kbert.cli import main
from kbert.commands.embed import parse_layers
from kbert.inference import embed
from kbert.inference.embedding import COMBINES
from kbert.inference.embedding import POOLINGS
from kbert.models import BertBackbone
from kbert.presets import BUILTIN_PRESETS
from kbert.tokenizer.bert_tokenizer import BertTokenizer

TEXTS = ["The cat sat on the mat.", "a dog", "北京 Café naïve"]


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    """A backbone preset (2 layers, 32 wide) with its vocabulary; no task head."""
    root = tmp_path_factory.mktemp("cli_embed")
    folder = root / "backbone"
    shared_backbone().save_to_preset(folder, tokenizer=make_tokenizer(root))
    return str(folder)


@pytest.fixture(scope="module")
def loaded(preset):
    """The preset as the API loads it: (backbone, tokenizer)."""
    return BertBackbone.from_preset(preset), BertTokenizer.from_preset(preset)


def _json_lines(text):
    return [json.loads(line) for line in text.splitlines()]


def test_help_names_the_options_and_the_choices_are_the_apis(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["embed", "--help"])
    assert exit_info.value.code == 0
    help_text = capsys.readouterr().out
    for option in ("--model", "--file", "--json", "--layers", "--combine", "--pooling", "--output"):
        assert option in help_text
    parser = build_parser()
    for option, values in (("--combine", COMBINES), ("--pooling", POOLINGS)):
        for value in values:
            assert getattr(parser.parse_args(["embed", option, value]), option[2:]) == value
        # A choice the API lacks is a usage error (argparse's exit status 2).
        with pytest.raises(SystemExit) as exit_info:
            parser.parse_args(["embed", option, "max", "the cat"])
        assert exit_info.value.code == 2
        assert "invalid choice: 'max'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "spec, layers",
    [("-4..-1", (-4, -3, -2, -1)), ("-1", (-1,)), ("0,4,8", (0, 4, 8)), ("0..2, 5", (0, 1, 2, 5))],
)
def test_layer_specs(spec, layers):
    assert parse_layers(spec) == layers


def test_pooled_vectors_to_npy_equal_the_api(preset, loaded, tmp_path, capsys):
    backbone, tokenizer = loaded
    path = tmp_path / "vectors.npy"
    command = ["embed", "--model", preset, "--layers=-2..-1", "--pooling", "mean"]
    assert main(command + ["--output", str(path), *TEXTS]) == 0
    assert f"wrote 3 texts to {path}" in capsys.readouterr().out
    written = np.load(path, allow_pickle=False)
    expected = embed(backbone, tokenizer, TEXTS, layers=(-2, -1), pooling="mean")
    assert written.shape == (3, 64) and written.dtype == np.float32
    np.testing.assert_allclose(written, expected, atol=1e-6, rtol=0)


def test_token_vectors_to_jsonl_equal_the_api(preset, loaded, tmp_path, capsys):
    backbone, tokenizer = loaded
    path = tmp_path / "vectors.jsonl"
    command = ["embed", "--model", preset, "--layers", "0,2", "--combine", "sum", "--json"]
    assert main(command + ["--output", str(path), *TEXTS]) == 0
    assert json.loads(capsys.readouterr().out) == {"output": str(path), "texts": 3}
    records = _json_lines(path.read_text(encoding="utf-8"))
    expected = embed(backbone, tokenizer, TEXTS, layers=(0, 2), combine="sum")
    assert [record["text"] for record in records] == TEXTS
    for record, result in zip(records, expected):
        assert record["tokens"] == list(result.tokens)
        assert [tuple(offset) for offset in record["offsets"]] == list(result.offsets)
        np.testing.assert_allclose(np.array(record["vectors"]), result.vectors, atol=1e-6, rtol=0)
    cafe = records[2]["tokens"].index("cafe")
    start, end = records[2]["offsets"][cafe]
    assert TEXTS[2][start:end] == "Café"


def test_json_lines_on_stdout_and_a_plain_negative_layer(preset, loaded, capsys):
    backbone, tokenizer = loaded
    command = ["embed", "--model", preset, "--layers", "-1", "--pooling", "cls", "--json"]
    assert main(command + TEXTS) == 0
    records = _json_lines(capsys.readouterr().out)
    expected = embed(backbone, tokenizer, TEXTS, layers=-1, pooling="cls")
    assert [record["text"] for record in records] == TEXTS
    np.testing.assert_allclose([record["vector"] for record in records], expected, atol=1e-6)


def test_many_texts_from_a_file_show_a_progress_bar(preset, loaded, tmp_path, capsys):
    backbone, tokenizer = loaded
    lines = [f"the cat number {index} sat" for index in range(20)]
    source = tmp_path / "texts.txt"
    # A blank line in the middle is skipped.
    source.write_text("\n".join(lines[:10]) + "\n\n" + "\n".join(lines[10:]), encoding="utf-8")
    path = tmp_path / "vectors.jsonl"
    command = ["embed", "--model", preset, "--pooling", "mean", "--batch-size", "8"]
    assert main(command + ["--file", str(source), "--output", str(path)]) == 0
    captured = capsys.readouterr()
    assert "embed" in captured.err and "20/20" in captured.err
    records = _json_lines(path.read_text(encoding="utf-8"))
    assert [record["text"] for record in records] == lines
    expected = embed(backbone, tokenizer, lines, pooling="mean")
    np.testing.assert_allclose([record["vector"] for record in records], expected, atol=1e-6)


def test_token_vectors_to_npy_only_when_the_lengths_agree(
    preset, loaded, tmp_path, capsys, monkeypatch
):
    backbone, tokenizer = loaded
    path = tmp_path / "tokens.npy"
    same_length = ["the cat sat", "a dog ran"]
    assert main(["embed", "--model", preset, "--output", str(path), *same_length]) == 0
    assert "(array (2, 5, 64))" in capsys.readouterr().out
    expected = embed(backbone, tokenizer, same_length)
    np.testing.assert_allclose(
        np.load(path), np.stack([result.vectors for result in expected]), atol=1e-6, rtol=0
    )

    # Refused from the token counts alone, before any forward pass.
    def no_forward_pass(*args, **kwargs):
        raise AssertionError("the model ran")

    monkeypatch.setattr("kbert.inference.embed", no_forward_pass)
    other = tmp_path / "other.npy"
    assert main(["embed", "--model", preset, "--output", str(other), *TEXTS]) == 1
    error = capsys.readouterr().err
    assert "kbert embed: error: A .npy file holds one array" in error
    assert "different numbers of tokens (4, 6, 9)" in error and "Write .jsonl instead" in error
    assert not other.exists()


def test_a_summary_per_text_without_output(preset, loaded, capsys):
    backbone, tokenizer = loaded
    assert main(["embed", "--model", preset, "--pooling", "mean", *TEXTS]) == 0
    lines = capsys.readouterr().out.splitlines()
    vectors = embed(backbone, tokenizer, TEXTS, pooling="mean")
    norms = np.linalg.norm(vectors, axis=-1)
    assert lines == [f"64 dims\tnorm {norm:.4f}\t{text}" for norm, text in zip(norms, TEXTS)]
    assert main(["embed", "--model", preset, TEXTS[1]]) == 0
    assert capsys.readouterr().out.startswith(f"4 tokens x 64 dims\tmean norm ")


def test_the_default_model_is_the_demo(capsys):
    assert main(["embed", "--pooling", "cls", "--json", "The cat sat."]) == 0
    (record,) = _json_lines(capsys.readouterr().out)
    # By default the last four blocks (all of them when there are fewer) are joined.
    config = json.loads((BUILTIN_PRESETS["demo"] / "config.json").read_text())["backbone"]
    blocks = min(4, config["num_layers"])
    assert len(record["vector"]) == blocks * config["hidden_size"]


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--layers", "0,0"], "`layers` names hidden state 0 twice"),
        (["--layers", "7"], "`layers` must hold indices from -3 to 2"),
        (["--layers=1..x"], "`--layers` takes indices and inclusive ranges"),
        (["--layers=2..1"], r"(a range counts up). Received: --layers='2..1'"),
        (["--layers="], "Received: --layers=''"),
        (["--output", "vectors.txt"], "`--output` must end in .npy or .jsonl"),
        (["--output", "no/such/folder/v.npy"], "`--output`'s folder does not exist"),
        (["--batch-size", "0"], "`--batch-size` must be positive"),
    ],
)
def test_bad_arguments_exit_1_with_a_message(preset, capsys, arguments, message):
    assert main(["embed", "--model", preset, *arguments, "the cat"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("kbert embed: error: ") and message in error


def test_nothing_to_embed_and_unknown_presets_exit_1(preset, capsys):
    assert main(["embed", "--model", preset]) == 1
    assert "Nothing to do: give texts" in capsys.readouterr().err
    assert main(["embed", "--model", "no-such-preset", "the cat"]) == 1
    assert "Unknown preset 'no-such-preset'" in capsys.readouterr().err
