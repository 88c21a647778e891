"""`kbert convert`: the command writes a preset that reproduces transformers' outputs."""

import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

from kbert.cli import main
from kbert.models import BertPretrainer

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"word{i}" for i in range(59)]
REPOSITORY = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def pretraining_folder(tmp_path_factory):
    """A saved transformers BertForPreTraining with random weights, and the model."""
    folder = tmp_path_factory.mktemp("cli") / "hf"
    torch.manual_seed(1)
    config = transformers.BertConfig(
        vocab_size=len(VOCABULARY),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=64,
    )
    model = transformers.BertForPreTraining(config).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn_like(parameter) * 0.2
            parameter.copy_(noise + 1.0 if name.endswith("LayerNorm.weight") else noise)
    model.save_pretrained(folder)
    (folder / "vocab.txt").write_text("\n".join(VOCABULARY) + "\n", encoding="utf-8")
    return folder, model


def test_convert_command_writes_an_equivalent_preset(tmp_path, pretraining_folder, capsys):
    source, hf_model = pretraining_folder
    destination = tmp_path / "preset"
    assert main(["convert", str(source), str(destination)]) == 0
    assert capsys.readouterr().out.strip() == str(destination.resolve())

    model = BertPretrainer.from_preset(destination)
    # Two sequences, the second padded after 6 tokens.
    rng = np.random.default_rng(1)
    padding_mask = np.array([[1] * 10, [1] * 6 + [0] * 4], dtype="int32")
    token_ids = (rng.integers(5, len(VOCABULARY), size=(2, 10)) * padding_mask).astype("int32")
    segment_ids = np.array([[0] * 5 + [1] * 5, [0] * 3 + [1] * 3 + [0] * 4], dtype="int32")
    mask_positions = np.array([[2, 7], [1, 4]], dtype="int32")
    outputs = model(
        {
            "token_ids": token_ids,
            "segment_ids": segment_ids,
            "padding_mask": padding_mask,
            "mask_positions": mask_positions,
        }
    )
    with torch.no_grad():
        expected = hf_model(
            input_ids=torch.from_numpy(token_ids).long(),
            token_type_ids=torch.from_numpy(segment_ids).long(),
            attention_mask=torch.from_numpy(padding_mask).long(),
            output_hidden_states=True,
        )
    sequence_output = model.backbone(
        {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
    )["sequence_output"]
    mlm_expected = expected.prediction_logits.numpy()[np.arange(2)[:, None], mask_positions]
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(sequence_output),
        expected.hidden_states[-1].numpy(),
        rtol=0,
        atol=1e-4,
    )
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(outputs["mlm_logits"]), mlm_expected, rtol=0, atol=1e-4
    )
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(outputs["nsp_logits"]),
        expected.seq_relationship_logits.numpy(),
        rtol=0,
        atol=1e-4,
    )


def test_convert_command_needs_overwrite_for_an_existing_preset(
    tmp_path, pretraining_folder, capsys
):
    source, _ = pretraining_folder
    destination = tmp_path / "preset"
    assert main(["convert", str(source), str(destination)]) == 0
    capsys.readouterr()

    assert main(["convert", str(source), str(destination)]) == 1
    error = capsys.readouterr().err
    assert "kbert convert: error:" in error and "--overwrite" in error

    assert main(["convert", str(source), str(destination), "--overwrite"]) == 0


def test_convert_command_reports_an_unknown_folder(tmp_path, capsys):
    source = tmp_path / "empty"
    source.mkdir()
    assert main(["convert", str(source), str(tmp_path / "preset")]) == 1
    error = capsys.readouterr().err
    assert "Unknown checkpoint format" in error and "it holds nothing" in error
    assert error.count("\n") == 1 and "`kbert convert --help` lists each format's files" in error
    assert not (tmp_path / "preset").exists()


def test_help_is_fast_because_keras_is_not_imported():
    code = (
        "import sys\n"
        "import kbert.cli\n"
        "try:\n"
        "    kbert.cli.main(['convert', '--help'])\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
        "print('keras imported:', 'keras' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "--overwrite" in result.stdout
    assert result.stdout.strip().endswith("keras imported: False")
