"""keras-hub's BERT preset names work wherever a model is asked for, offline-tested.

keras-hub's presets are Google's published checkpoints converted, so each name is an
alias of kbert's name for the same weights; a name with no exact match gets a "did you
mean" that names kbert's checkpoint. Nothing here downloads: the cache is private and
kbert is offline, so the resolution shows in the folder the error asks files to be put in.
"""

import pytest

from kbert.checkpoints import named_checkpoints
from kbert.presets import resolve_preset

# keras-hub's names (keras_hub/src/models/bert/bert_presets.py) -> kbert's.
KERAS_HUB_NAMES = {
    "bert_tiny_en_uncased": "bert-tiny-uncased",
    "bert_small_en_uncased": "bert-small-uncased",
    "bert_medium_en_uncased": "bert-medium-uncased",
    "bert_base_en_uncased": "bert-base-uncased",
    "bert_base_en": "bert-base-cased",
    "bert_large_en_uncased": "bert-large-uncased",
    "bert_large_en": "bert-large-cased",
    "bert_base_zh": "bert-base-chinese",
    "bert_base_multi": "bert-base-multilingual-cased",
}


@pytest.fixture(autouse=True)
def offline_private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("KBERT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.mark.parametrize("keras_hub_name", sorted(KERAS_HUB_NAMES))
def test_keras_hub_names_are_aliases_of_the_same_checkpoint(keras_hub_name):
    assert named_checkpoints.is_checkpoint_name(keras_hub_name)
    entry = named_checkpoints.named_checkpoint(keras_hub_name)
    assert entry.name == KERAS_HUB_NAMES[keras_hub_name]
    # The same checkpoint keras-hub publishes under that name (its Kaggle handle).
    assert entry.keras_hub_handle == f"keras/bert/keras/{keras_hub_name}/3"


def test_a_keras_hub_name_resolves_to_kbert_checkpoint(tmp_path):
    with pytest.raises(ValueError, match="kbert is offline") as error:
        resolve_preset("bert_tiny_en_uncased")
    assert str(tmp_path / "cache" / "downloads" / "bert-tiny-uncased") in str(error.value)


def test_a_near_keras_hub_name_suggests_kbert_name():
    # keras-hub's fine-tuned SST-2 classifier has no kbert counterpart.
    with pytest.raises(ValueError) as error:
        resolve_preset("bert_tiny_en_uncased_sst2")
    assert "Did you mean: bert-tiny-uncased (bert_tiny_en_uncased)" in str(error.value)
