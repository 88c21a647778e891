"""A config and its weights must agree before a model is built.

Weights holding more encoder blocks than the config declares used to load as a smaller
model, the extra blocks dropped without a word; now they are refused naming both counts,
for kbert presets and for imported formats alike. A vocabulary shorter than the
embedding table is reported naming both sizes.
"""

import logging

import pytest

from kbert.checkpoints import convert
from kbert.checkpoints import export_huggingface
from kbert.checkpoints.kbert_preset import CONFIG_FILE
from kbert.files import read_json
from kbert.files import write_json_atomically
from kbert.models import BertBackbone
from kbert.tokenizer import BertTokenizer

from model_helpers import TINY

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [
    f"word{index}" for index in range(TINY["vocabulary_size"] - 5)
]


def tokenizer(size=len(VOCABULARY)):
    return BertTokenizer(VOCABULARY[:size], max_length=TINY["max_positions"])


def two_layer_preset(folder, vocabulary_size=len(VOCABULARY)):
    BertBackbone(**TINY).save_to_preset(folder, tokenizer=tokenizer(vocabulary_size))
    return folder


def test_a_preset_config_with_fewer_layers_than_its_weights_is_refused(tmp_path):
    folder = two_layer_preset(tmp_path / "preset")
    config = read_json(folder / CONFIG_FILE)
    config["backbone"]["num_layers"] = 1
    write_json_atomically(folder / CONFIG_FILE, config)
    refusal = r"hold 2 transformer layers but config\.json says num_layers=1"
    with pytest.raises(ValueError, match=refusal):
        BertBackbone.from_preset(folder)


def test_a_huggingface_config_with_fewer_layers_than_its_weights_is_refused(tmp_path):
    backbone = BertBackbone(**TINY)
    export_huggingface(backbone, tmp_path / "hf", tokenizer=tokenizer())
    config = read_json(tmp_path / "hf" / "config.json")
    assert config["num_hidden_layers"] == 2
    config["num_hidden_layers"] = 1
    write_json_atomically(tmp_path / "hf" / "config.json", config)
    with pytest.raises(ValueError, match=r"hold 2 transformer layers but .* num_layers=1"):
        convert(tmp_path / "hf", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_matching_layers_still_load(tmp_path):
    folder = two_layer_preset(tmp_path / "preset")
    assert BertBackbone.from_preset(folder).bert_config.num_layers == 2


def test_a_vocabulary_shorter_than_the_embedding_table_is_reported_with_both_sizes(
    tmp_path, caplog
):
    folder = two_layer_preset(tmp_path / "preset", vocabulary_size=60)
    with caplog.at_level(logging.WARNING, logger="kbert.checkpoints"):
        BertBackbone.from_preset(folder)
    assert "vocabulary has 60 tokens but its embedding table 97 rows" in caplog.text
