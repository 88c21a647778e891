"""Hugging Face `BertForMultipleChoice`, both ways: kbert's logits equal transformers'.

A tiny transformers model with random weights (LayerNorms and biases too, so a swapped
or skipped tensor shows) is saved with `save_pretrained`; kbert loads the folder
directly and through `kbert convert`, and `kbert export --format huggingface` writes
it back for transformers to load.
"""

import json

import keras
import numpy as np
import pytest

from kbert.cli import main
from kbert.models import BertMultipleChoice
from kbert.models.preset_loading import load_checkpoint

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TOLERANCE = 1e-5
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"word{i}" for i in range(60)]
HF_CONFIG = dict(
    vocab_size=len(VOCABULARY),
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=37,
    max_position_embeddings=32,
    type_vocab_size=2,
)
# Two examples of three choices; the real lengths differ per choice, so rows are padded.
LENGTHS = ((12, 7, 9), (5, 12, 10))


def make_multiple_choice_folder(folder):
    """A random tiny transformers `BertForMultipleChoice`, saved to `folder`."""
    torch.manual_seed(0)
    model = transformers.BertForMultipleChoice(transformers.BertConfig(**HF_CONFIG)).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn_like(parameter) * 0.2
            parameter.copy_(noise + 1.0 if name.endswith("LayerNorm.weight") else noise)
    model.save_pretrained(folder)
    (folder / "vocab.txt").write_text("\n".join(VOCABULARY) + "\n", encoding="utf-8")
    return model


def choice_batch():
    """(B, C, L) inputs: `[CLS]`-first rows, segment 1 on the second half, padded."""
    rng = np.random.default_rng(0)
    lengths = np.array(LENGTHS)
    length = int(lengths.max())
    token_ids = rng.integers(5, len(VOCABULARY), size=(*lengths.shape, length))
    token_ids[..., 0] = 2
    padding_mask = np.arange(length) < lengths[..., None]
    segment_ids = (np.arange(length) >= lengths[..., None] // 2) & padding_mask
    return {
        "token_ids": np.where(padding_mask, token_ids, 0).astype("int32"),
        "segment_ids": segment_ids.astype("int32"),
        "padding_mask": padding_mask.astype("int32"),
    }


def huggingface_logits(model, batch):
    with torch.no_grad():
        return model(
            input_ids=torch.tensor(batch["token_ids"], dtype=torch.long),
            token_type_ids=torch.tensor(batch["segment_ids"], dtype=torch.long),
            attention_mask=torch.tensor(batch["padding_mask"], dtype=torch.long),
        ).logits.numpy()


def kbert_logits(model, batch):
    return keras.ops.convert_to_numpy(model(batch, training=False))


def test_loaded_directly_and_converted_the_logits_equal_transformers(tmp_path):
    original = make_multiple_choice_folder(tmp_path / "hf")
    batch = choice_batch()
    expected = huggingface_logits(original, batch)
    assert expected.shape == (2, 3)

    direct, tokenizer, _ = load_checkpoint(tmp_path / "hf")
    assert isinstance(direct, BertMultipleChoice)
    assert tokenizer is not None and direct.freshly_initialized_heads == []
    np.testing.assert_allclose(kbert_logits(direct, batch), expected, atol=TOLERANCE, rtol=0)

    assert main(["convert", str(tmp_path / "hf"), str(tmp_path / "preset")]) == 0
    converted = BertMultipleChoice.from_preset(tmp_path / "preset")
    assert converted.freshly_initialized_heads == []
    np.testing.assert_allclose(kbert_logits(converted, batch), expected, atol=TOLERANCE, rtol=0)


def test_export_loads_back_into_transformers_with_equal_logits(tmp_path):
    make_multiple_choice_folder(tmp_path / "hf")
    assert main(["convert", str(tmp_path / "hf"), str(tmp_path / "preset")]) == 0
    model = BertMultipleChoice.from_preset(tmp_path / "preset")
    assert (
        main(["export", str(tmp_path / "preset"), str(tmp_path / "out"), "--format", "huggingface"])
        == 0
    )
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["architectures"] == ["BertForMultipleChoice"]
    exported = transformers.BertForMultipleChoice.from_pretrained(tmp_path / "out").eval()
    assert tuple(exported.classifier.weight.shape) == (1, HF_CONFIG["hidden_size"])
    batch = choice_batch()
    np.testing.assert_allclose(
        huggingface_logits(exported, batch), kbert_logits(model, batch), atol=TOLERANCE, rtol=0
    )
