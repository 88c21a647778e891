"""Hugging Face import: kbert must reproduce transformers' own outputs for every head.

Each test builds a tiny transformers model with random weights (LayerNorms and biases
included, so a swapped or skipped tensor shows), saves it with `save_pretrained`, converts
the folder into a kbert preset and compares outputs on a padded batch.
"""

import json
import logging
import shutil

import keras
import numpy as np
import pytest
from safetensors.numpy import load_file
from safetensors.numpy import save_file

from kbert.checkpoints import convert
from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.models import BertMaskedLM
from kbert.models import BertPretrainer
from kbert.models import BertQuestionAnswerer
from kbert.models import BertTokenClassifier
from kbert.models.preset_loading import load_checkpoint
from kbert.tokenizer.bert_tokenizer import BertTokenizer

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TOLERANCE = 1e-4
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"word{i}" for i in range(94)]
HF_CONFIG = dict(
    vocab_size=len(VOCABULARY),
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=37,
    max_position_embeddings=64,
    type_vocab_size=2,
)
# Two sequences of real lengths 12 and 7, so the second row is padded.
LENGTHS = (12, 7)
MASK_POSITIONS = np.array([[1, 4, 9], [2, 5, 6]], dtype="int32")


def make_huggingface_folder(folder, architecture, dtype=None, **config_overrides):
    """Saves a randomly initialised transformers `architecture` to `folder`; returns it."""
    torch.manual_seed(0)
    config = transformers.BertConfig(**HF_CONFIG, **config_overrides)
    model = getattr(transformers, architecture)(config).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn_like(parameter) * 0.2
            parameter.copy_(noise + 1.0 if name.endswith("LayerNorm.weight") else noise)
    if dtype is not None:
        model = model.to(dtype)
    model.save_pretrained(folder)
    (folder / "vocab.txt").write_text("\n".join(VOCABULARY) + "\n", encoding="utf-8")
    return model.float()


def padded_batch():
    rng = np.random.default_rng(0)
    sequence_length = max(LENGTHS)
    token_ids = rng.integers(5, len(VOCABULARY), size=(len(LENGTHS), sequence_length))
    padding_mask = np.arange(sequence_length)[None, :] < np.array(LENGTHS)[:, None]
    segment_ids = np.zeros_like(token_ids)
    for row, length in enumerate(LENGTHS):
        segment_ids[row, length // 2 : length] = 1
    return {
        "token_ids": np.where(padding_mask, token_ids, 0).astype("int32"),
        "segment_ids": segment_ids.astype("int32"),
        "padding_mask": padding_mask.astype("int32"),
    }


def huggingface_outputs(model, batch):
    """transformers' outputs and its encoder's outputs for `batch`."""
    arguments = dict(
        input_ids=torch.from_numpy(batch["token_ids"]).long(),
        token_type_ids=torch.from_numpy(batch["segment_ids"]).long(),
        attention_mask=torch.from_numpy(batch["padding_mask"]).long(),
    )
    with torch.no_grad():
        encoder = model if isinstance(model, transformers.BertModel) else model.bert
        return model(**arguments), encoder(**arguments)


def to_numpy(outputs):
    if isinstance(outputs, dict):
        return {key: keras.ops.convert_to_numpy(value) for key, value in outputs.items()}
    return keras.ops.convert_to_numpy(outputs)


def max_difference(actual, expected):
    expected = expected.detach().numpy() if hasattr(expected, "detach") else expected
    assert actual.shape == expected.shape
    return float(np.max(np.abs(actual - expected)))


def assert_close(actual, expected, tolerance=TOLERANCE):
    difference = max_difference(actual, expected)
    assert difference < tolerance, f"max abs difference {difference:.2e} >= {tolerance}"


def assert_backbone_parity(backbone, hf_encoder_outputs, batch, check_pooled=True):
    outputs = to_numpy(backbone(batch))
    assert_close(outputs["sequence_output"], hf_encoder_outputs.last_hidden_state)
    if check_pooled:
        assert_close(outputs["pooled_output"], hf_encoder_outputs.pooler_output)


def at_mask_positions(logits):
    """(B, L, V) transformers logits -> (B, P, V) at MASK_POSITIONS."""
    return logits.detach().numpy()[np.arange(len(LENGTHS))[:, None], MASK_POSITIONS]


def convert_folder(tmp_path, source):
    destination = convert(source, tmp_path / "preset")
    assert destination == (tmp_path / "preset").resolve()
    return destination


# --- Parity, one test per architecture ----------------------------------------------------


def test_pretraining_parity_and_tokenizer_settings(tmp_path):
    source = tmp_path / "hf"
    hf_model = make_huggingface_folder(source, "BertForPreTraining")
    (source / "tokenizer_config.json").write_text(
        json.dumps({"do_lower_case": False, "model_max_length": 512}), encoding="utf-8"
    )
    destination = convert_folder(tmp_path, source)

    model = BertPretrainer.from_preset(destination)
    batch = padded_batch()
    hf_outputs, hf_encoder_outputs = huggingface_outputs(hf_model, batch)
    assert_backbone_parity(model.backbone, hf_encoder_outputs, batch)
    outputs = to_numpy(model({**batch, "mask_positions": MASK_POSITIONS}))
    assert_close(outputs["mlm_logits"], at_mask_positions(hf_outputs.prediction_logits))
    assert_close(outputs["nsp_logits"], hf_outputs.seq_relationship_logits)

    assert model.freshly_initialized_heads == []
    assert model.tokenizer.lowercase is False
    # model_max_length (512) is capped at the model's 64 positions.
    assert model.tokenizer.max_length == HF_CONFIG["max_position_embeddings"]
    metadata = json.loads((destination / "metadata.json").read_text(encoding="utf-8"))
    assert metadata["source"] == "huggingface"
    assert metadata["source_path"] == str(source.resolve())


def test_masked_lm_parity(tmp_path):
    source = tmp_path / "hf"
    hf_model = make_huggingface_folder(source, "BertForMaskedLM")
    model = BertMaskedLM.from_preset(convert_folder(tmp_path, source))

    batch = padded_batch()
    hf_outputs, hf_encoder_outputs = huggingface_outputs(hf_model, batch)
    # BertForMaskedLM has no pooler, so only the sequence output is comparable.
    assert_backbone_parity(model.backbone, hf_encoder_outputs, batch, check_pooled=False)
    logits = to_numpy(model({**batch, "mask_positions": MASK_POSITIONS}))
    assert_close(logits, at_mask_positions(hf_outputs.logits))


def test_sequence_classification_parity_keeps_label_names(tmp_path):
    source = tmp_path / "hf"
    label_names = ["negative", "neutral", "positive"]
    hf_model = make_huggingface_folder(
        source, "BertForSequenceClassification", id2label=dict(enumerate(label_names))
    )
    model = BertClassifier.from_preset(convert_folder(tmp_path, source))

    assert model.label_names == label_names
    batch = padded_batch()
    hf_outputs, hf_encoder_outputs = huggingface_outputs(hf_model, batch)
    assert_backbone_parity(model.backbone, hf_encoder_outputs, batch)
    assert_close(to_numpy(model(batch)), hf_outputs.logits)


def test_token_classification_parity_with_default_label_names(tmp_path):
    source = tmp_path / "hf"
    hf_model = make_huggingface_folder(source, "BertForTokenClassification", num_labels=5)
    batch = padded_batch()
    hf_outputs, _ = huggingface_outputs(hf_model, batch)

    # The Python API, without a preset in between...
    model, tokenizer, _ = load_checkpoint(source)
    assert isinstance(model, BertTokenClassifier)
    assert isinstance(tokenizer, BertTokenizer) and model.tokenizer is tokenizer
    assert_close(to_numpy(model(batch)), hf_outputs.logits)
    # ...and through one.
    model = BertTokenClassifier.from_preset(convert_folder(tmp_path, source))
    assert model.label_names == [f"LABEL_{index}" for index in range(5)]
    assert_close(to_numpy(model(batch)), hf_outputs.logits)


def test_question_answering_parity(tmp_path):
    source = tmp_path / "hf"
    hf_model = make_huggingface_folder(source, "BertForQuestionAnswering")
    model = BertQuestionAnswerer.from_preset(convert_folder(tmp_path, source))

    batch = padded_batch()
    hf_outputs, _ = huggingface_outputs(hf_model, batch)
    outputs = to_numpy(model(batch))
    assert_close(outputs["start_logits"], hf_outputs.start_logits)
    assert_close(outputs["end_logits"], hf_outputs.end_logits)


def test_bare_model_without_architectures_is_a_backbone(tmp_path):
    source = tmp_path / "hf"
    hf_model = make_huggingface_folder(source, "BertModel")
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    del config["architectures"]
    (source / "config.json").write_text(json.dumps(config), encoding="utf-8")
    # A bare BertModel's tensors have no "bert." prefix.
    assert not any(name.startswith("bert.") for name in load_file(source / "model.safetensors"))

    backbone = BertBackbone.from_preset(convert_folder(tmp_path, source))
    batch = padded_batch()
    _, hf_encoder_outputs = huggingface_outputs(hf_model, batch)
    assert_backbone_parity(backbone, hf_encoder_outputs, batch)


def test_pytorch_bin_parity_without_unused_weight_warnings(tmp_path, caplog):
    source = tmp_path / "hf"
    hf_model = make_huggingface_folder(source, "BertForPreTraining")
    # The layout of pytorch_model.bin files written by transformers 4: the whole state
    # dict, so the tied decoder and its bias appear too, plus the old position_ids buffer.
    state = hf_model.state_dict()
    assert "cls.predictions.decoder.weight" in state
    state["bert.embeddings.position_ids"] = torch.arange(HF_CONFIG["max_position_embeddings"])[None]
    torch.save(state, source / "pytorch_model.bin")
    (source / "model.safetensors").unlink()

    with caplog.at_level(logging.WARNING, logger="kbert"):
        model = BertPretrainer.from_preset(convert_folder(tmp_path, source))
    assert "not imported" not in caplog.text

    batch = padded_batch()
    hf_outputs, _ = huggingface_outputs(hf_model, batch)
    outputs = to_numpy(model({**batch, "mask_positions": MASK_POSITIONS}))
    assert_close(outputs["mlm_logits"], at_mask_positions(hf_outputs.prediction_logits))
    assert_close(outputs["nsp_logits"], hf_outputs.seq_relationship_logits)


def test_bfloat16_safetensors_are_widened(tmp_path):
    source = tmp_path / "hf"
    # Returned in float32 after the round trip through bfloat16: the weights in the file.
    hf_model = make_huggingface_folder(source, "BertForQuestionAnswering", dtype=torch.bfloat16)
    model, _, _ = load_checkpoint(source)

    batch = padded_batch()
    hf_outputs, _ = huggingface_outputs(hf_model, batch)
    outputs = to_numpy(model(batch))
    assert_close(outputs["start_logits"], hf_outputs.start_logits)


def test_huggingface_tokenizer_json_matches_transformers(tmp_path):
    source = tmp_path / "hf"
    make_huggingface_folder(source, "BertForMaskedLM")
    hf_tokenizer = transformers.BertTokenizer(
        str(source / "vocab.txt"), do_lower_case=False, tokenize_chinese_chars=False
    )
    (source / "vocab.txt").unlink()
    hf_tokenizer.save_pretrained(source)
    assert (source / "tokenizer.json").is_file()

    model = BertMaskedLM.from_preset(convert_folder(tmp_path, source))
    texts = ["word1 Word2 word33", "word7, word8!"]
    assert model.tokenizer.lowercase is False
    assert model.tokenizer.tokenize_chinese_chars is False
    expected = hf_tokenizer(texts, padding=True, return_tensors="np")["input_ids"]
    np.testing.assert_array_equal(model.tokenizer(texts)["token_ids"], expected)


def test_padded_batch_matches_each_sequence_alone(tmp_path):
    source = tmp_path / "hf"
    make_huggingface_folder(source, "BertForPreTraining")
    model = BertPretrainer.from_preset(convert_folder(tmp_path, source))

    batch = {**padded_batch(), "mask_positions": MASK_POSITIONS}
    batched = to_numpy(model(batch))
    batched_sequence = to_numpy(model.backbone(padded_batch()))["sequence_output"]
    for row, length in enumerate(LENGTHS):
        alone = {key: value[row : row + 1, :length] for key, value in batch.items()}
        alone["mask_positions"] = MASK_POSITIONS[row : row + 1]
        single = to_numpy(model(alone))
        single_sequence = to_numpy(
            model.backbone(
                {key: alone[key] for key in ("token_ids", "segment_ids", "padding_mask")}
            )
        )["sequence_output"]
        assert_close(batched_sequence[row, :length], single_sequence[0], tolerance=1e-5)
        assert_close(batched["mlm_logits"][row], single["mlm_logits"][0], tolerance=1e-5)
        assert_close(batched["nsp_logits"][row], single["nsp_logits"][0], tolerance=1e-5)


# --- Errors -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def masked_lm_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("masked_lm") / "hf"
    make_huggingface_folder(folder, "BertForMaskedLM")
    return folder


def copy_of(folder, tmp_path):
    return shutil.copytree(folder, tmp_path / "hf")


def edit_safetensors(folder, edit):
    path = folder / "model.safetensors"
    tensors = load_file(path)
    edit(tensors)
    save_file(tensors, path, metadata={"format": "pt"})


def test_mis_shaped_weight_names_it_and_both_shapes(tmp_path, masked_lm_folder):
    source = copy_of(masked_lm_folder, tmp_path)
    name = "bert.encoder.layer.1.intermediate.dense.weight"

    def shrink(tensors):
        assert tensors[name].shape == (37, 32)
        tensors[name] = tensors[name][:36]

    edit_safetensors(source, shrink)
    with pytest.raises(ValueError) as error:
        convert(source, tmp_path / "preset")
    message = str(error.value)
    assert name in message and "(36, 32)" in message and "(37, 32)" in message
    assert not (tmp_path / "preset").exists()


def test_missing_weight_is_named(tmp_path, masked_lm_folder):
    source = copy_of(masked_lm_folder, tmp_path)
    name = "bert.encoder.layer.0.attention.self.key.bias"
    edit_safetensors(source, lambda tensors: tensors.pop(name))
    with pytest.raises(ValueError, match=f"missing weight '{name}'"):
        convert(source, tmp_path / "preset")
    assert not (tmp_path / "preset").exists()


def test_missing_pooler_is_an_error_when_the_head_needs_it(tmp_path):
    source = tmp_path / "hf"
    make_huggingface_folder(source, "BertForSequenceClassification")
    edit_safetensors(source, lambda tensors: tensors.pop("bert.pooler.dense.weight"))
    with pytest.raises(ValueError, match="bert.pooler.dense.weight"):
        load_checkpoint(source)


def test_unused_weights_are_reported(tmp_path, masked_lm_folder, caplog):
    source = copy_of(masked_lm_folder, tmp_path)
    edit_safetensors(
        source, lambda tensors: tensors.update({"cls.extra.weight": np.ones(3, "float32")})
    )
    with caplog.at_level(logging.WARNING, logger="kbert"):
        load_checkpoint(source)
    assert "cls.extra.weight" in caplog.text


def test_untied_decoder_is_refused(tmp_path, masked_lm_folder):
    source = copy_of(masked_lm_folder, tmp_path)

    def untie(tensors):
        embeddings = tensors["bert.embeddings.word_embeddings.weight"]
        tensors["cls.predictions.decoder.weight"] = embeddings + 1.0

    edit_safetensors(source, untie)
    with pytest.raises(ValueError, match="cls.predictions.decoder.weight"):
        load_checkpoint(source)


def test_unknown_folder_lists_what_was_looked_for(tmp_path):
    (tmp_path / "notes.txt").write_text("not a checkpoint", encoding="utf-8")
    with pytest.raises(ValueError) as error:
        convert(tmp_path, tmp_path.parent / "preset_from_unknown")
    message = str(error.value)
    # What the folder holds, and where each format's files are listed (the message
    # stays short; `kbert convert --help` has the list).
    assert "notes.txt" in message and "kbert convert --help" in message
    assert message.count("\n") <= 2


@pytest.mark.parametrize(
    "field, value",
    [
        ("position_embedding_type", "relative_key"),
        ("is_decoder", True),
        ("add_cross_attention", True),
        ("hidden_act", "quick_gelu"),
        ("model_type", "roberta"),
        ("architectures", ["BertLMHeadModel"]),
    ],
)
def test_unsupported_settings_are_refused(tmp_path, masked_lm_folder, field, value):
    source = copy_of(masked_lm_folder, tmp_path)
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    config[field] = value
    (source / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ValueError, match=f"{field}={value!r}".replace("[", r"\[")):
        convert(source, tmp_path / "preset")
    assert not (tmp_path / "preset").exists()


def test_destination_rules(tmp_path, masked_lm_folder):
    destination = tmp_path / "preset"
    destination.mkdir()
    (destination / "mine.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(ValueError, match="not empty"):
        convert(masked_lm_folder, destination)
    with pytest.raises(ValueError, match="not a kbert preset"):
        convert(masked_lm_folder, destination, overwrite=True)
    assert (destination / "mine.txt").read_text(encoding="utf-8") == "keep me"
    with pytest.raises(ValueError, match="differ"):
        convert(masked_lm_folder, masked_lm_folder, overwrite=True)

    other = tmp_path / "other"
    convert(masked_lm_folder, other)
    with pytest.raises(ValueError, match="not empty"):
        convert(masked_lm_folder, other)
    assert convert(masked_lm_folder, other, overwrite=True) == other.resolve()
    assert isinstance(BertMaskedLM.from_preset(other), BertMaskedLM)
