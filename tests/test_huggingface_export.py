"""Hugging Face export: Hugging Face -> kbert -> Hugging Face gives transformers' outputs back.

Each round trip starts from a tiny transformers model with random weights, converts its
`save_pretrained` folder to a kbert preset, exports that with `kbert export`, loads the
export with the same transformers class and compares outputs on a padded batch.
"""

import json

import keras
import numpy as np
import pytest

from kbert.checkpoints import convert
from kbert.checkpoints import export_huggingface
from kbert.cli import main
from kbert.models import BertBackbone
from kbert.tokenizer.bert_tokenizer import BertTokenizer

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TOLERANCE = 1e-4
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "##s", "on"] + [
    f"word{i}" for i in range(50)
]
HF_CONFIG = dict(
    vocab_size=len(VOCABULARY),
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=37,
    max_position_embeddings=40,
)
LENGTHS = (12, 7)


def make_folder(folder, architecture, **config):
    torch.manual_seed(7)
    model = getattr(transformers, architecture)(
        transformers.BertConfig(**HF_CONFIG, **config)
    ).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn_like(parameter) * 0.2
            parameter.copy_(noise + 1.0 if name.endswith("LayerNorm.weight") else noise)
    model.save_pretrained(folder)
    (folder / "vocab.txt").write_text("\n".join(VOCABULARY) + "\n", encoding="utf-8")
    return model


def batch():
    rng = np.random.default_rng(4)
    length = max(LENGTHS)
    padding_mask = np.arange(length)[None, :] < np.array(LENGTHS)[:, None]
    token_ids = np.where(padding_mask, rng.integers(5, len(VOCABULARY), (2, length)), 0)
    segment_ids = np.zeros_like(token_ids)
    for row, real_length in enumerate(LENGTHS):
        segment_ids[row, real_length // 2 : real_length] = 1
    return {
        "input_ids": torch.tensor(token_ids),
        "token_type_ids": torch.tensor(segment_ids),
        "attention_mask": torch.tensor(padding_mask.astype("int64")),
    }


def compared_outputs(architecture, outputs, attention_mask):
    """The outputs of `architecture` that kbert reproduces, padding removed."""
    mask = attention_mask.numpy() == 1
    if architecture == "BertModel":
        return {
            "last_hidden_state": outputs.last_hidden_state.numpy()[mask],
            "pooler_output": outputs.pooler_output.numpy(),
        }
    if architecture == "BertForPreTraining":
        return {
            "prediction_logits": outputs.prediction_logits.numpy()[mask],
            "seq_relationship_logits": outputs.seq_relationship_logits.numpy(),
        }
    if architecture == "BertForQuestionAnswering":
        return {
            "start_logits": outputs.start_logits.numpy()[mask],
            "end_logits": outputs.end_logits.numpy()[mask],
        }
    if architecture in ("BertForMaskedLM", "BertForTokenClassification"):
        return {"logits": outputs.logits.numpy()[mask]}
    return {"logits": outputs.logits.numpy()}


ROUND_TRIPS = [
    ("BertModel", {}),
    ("BertForPreTraining", {}),
    ("BertForMaskedLM", {}),
    ("BertForSequenceClassification", {"id2label": {0: "no", 1: "maybe", 2: "yes"}}),
    ("BertForTokenClassification", {"id2label": {0: "O", 1: "B-PER", 2: "I-PER", 3: "B-LOC"}}),
    ("BertForQuestionAnswering", {}),
]


@pytest.mark.parametrize("architecture, config", ROUND_TRIPS, ids=[name for name, _ in ROUND_TRIPS])
def test_huggingface_to_kbert_to_huggingface_reproduces_the_original(
    tmp_path, architecture, config
):
    original = make_folder(tmp_path / "original", architecture, **config)
    convert(tmp_path / "original", tmp_path / "preset")
    exported = export_huggingface(tmp_path / "preset", tmp_path / "exported")

    reloaded = getattr(transformers, architecture).from_pretrained(exported).eval()
    inputs = batch()
    with torch.no_grad():
        expected = compared_outputs(architecture, original(**inputs), inputs["attention_mask"])
        actual = compared_outputs(architecture, reloaded(**inputs), inputs["attention_mask"])
    differences = {name: float(np.max(np.abs(actual[name] - expected[name]))) for name in expected}
    print(f"{architecture} round trip max differences: {differences}")
    assert max(differences.values()) < TOLERANCE, differences

    exported_config = json.loads((exported / "config.json").read_text())
    assert exported_config["architectures"] == [architecture]
    if "id2label" in config:
        assert reloaded.config.id2label == config["id2label"]
        assert reloaded.config.label2id == {
            label: index for index, label in config["id2label"].items()
        }
    # Weights transformers would not use are not written, and none it needs is missing.
    from safetensors.numpy import load_file

    written = set(load_file(exported / "model.safetensors"))
    expected_names = {
        name
        for name in original.state_dict()
        if not name.startswith("cls.predictions.decoder") and not name.endswith("position_ids")
    }
    assert written == expected_names


def test_export_command_and_tokenizer(tmp_path, capsys):
    tokenizer = BertTokenizer(VOCABULARY, lowercase=True, max_length=40)
    backbone = BertBackbone(
        vocabulary_size=len(VOCABULARY),
        hidden_size=32,
        num_layers=1,
        num_heads=4,
        intermediate_size=37,
        max_positions=40,
        activation="gelu_approximate",
    )
    backbone.save_to_preset(tmp_path / "preset", tokenizer=tokenizer)
    assert (
        main(["export", str(tmp_path / "preset"), str(tmp_path / "hf"), "--format", "huggingface"])
        == 0
    )
    assert capsys.readouterr().out.strip() == str((tmp_path / "hf").resolve())

    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["hidden_act"] == "gelu_new"  # transformers' name for the tanh GELU
    hf_tokenizer = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf")
    for text in ("The cats sat on the word3", ("the CAT", "sat on word7")):
        pair = text if isinstance(text, tuple) else (text,)
        expected = tokenizer.encode(*pair).token_ids.tolist()
        assert hf_tokenizer(*pair)["input_ids"] == expected

    # The model agrees with kbert's.
    model = transformers.BertModel.from_pretrained(tmp_path / "hf").eval()
    inputs = batch()
    with torch.no_grad():
        hidden = model(**inputs).last_hidden_state.numpy()
    kbert_hidden = keras.ops.convert_to_numpy(
        backbone(
            {
                "token_ids": inputs["input_ids"].numpy().astype("int32"),
                "segment_ids": inputs["token_type_ids"].numpy().astype("int32"),
                "padding_mask": inputs["attention_mask"].numpy().astype("int32"),
            }
        )["sequence_output"]
    )
    mask = inputs["attention_mask"].numpy() == 1
    assert np.max(np.abs(hidden[mask] - kbert_hidden[mask])) < TOLERANCE

    # An existing export is replaced only on request, and only if it is one.
    assert (
        main(["export", str(tmp_path / "preset"), str(tmp_path / "hf"), "--format", "huggingface"])
        == 1
    )
    assert "not empty" in capsys.readouterr().err
    assert (
        main(
            [
                "export",
                str(tmp_path / "preset"),
                str(tmp_path / "hf"),
                "--format",
                "huggingface",
                "--overwrite",
            ]
        )
        == 0
    )
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("precious")
    assert (
        main(
            [
                "export",
                str(tmp_path / "preset"),
                str(tmp_path / "mine"),
                "--format",
                "huggingface",
                "--overwrite",
            ]
        )
        == 1
    )
    assert (tmp_path / "mine" / "notes.txt").read_text() == "precious"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["hf", "mine", "preset"]
