"""Destinations with names as long as the file system allows, and links leading nowhere.

A destination's last component may be 250 bytes (NAME_MAX is 255): the staging folder,
temporaries and lock kbert keeps beside it must still fit. A model source that is a
symbolic link loop, or a link to nothing, gets one line saying so.
"""

import os

import pytest

from kbert.checkpoints import convert
from kbert.checkpoints import export_huggingface
from kbert.files import OutputLock
from kbert.files import write_text_atomically
from kbert.models import BertBackbone
from kbert.presets import resolve_preset
from kbert.tokenizer import BertTokenizer

from model_helpers import TINY

LONG_NAME = "m" * 250
LOOP = r"^No model at '.*model': it is a symbolic link loop"
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [
    f"word{index}" for index in range(TINY["vocabulary_size"] - 5)
]


@pytest.fixture
def huggingface_folder(tmp_path):
    tokenizer = BertTokenizer(VOCABULARY, max_length=TINY["max_positions"])
    export_huggingface(BertBackbone(**TINY), tmp_path / "hf", tokenizer=tokenizer)
    return tmp_path / "hf"


def test_a_250_byte_destination_name_converts(tmp_path, huggingface_folder):
    destination = tmp_path / LONG_NAME
    convert(huggingface_folder, destination)
    assert (destination / "model.weights.h5").is_file()
    assert BertBackbone.from_preset(destination).bert_config.num_layers == TINY["num_layers"]
    # Converting again over it (a retired copy, a lock) fits as well.
    convert(huggingface_folder, destination, overwrite=True)
    assert sorted(os.listdir(tmp_path)) == sorted(["hf", LONG_NAME])


def test_a_250_byte_file_name_is_written_atomically(tmp_path):
    write_text_atomically(tmp_path / LONG_NAME, "text")
    assert (tmp_path / LONG_NAME).read_text() == "text"
    assert os.listdir(tmp_path) == [LONG_NAME]


def test_long_names_keep_distinct_siblings(tmp_path):
    first = OutputLock(tmp_path / (LONG_NAME + "a"))
    second = OutputLock(tmp_path / (LONG_NAME + "b"))
    assert first.lock_path != second.lock_path
    assert len(first.lock_path.name.encode()) <= 255


def test_a_symlink_loop_gets_its_own_message(tmp_path):
    loop = tmp_path / "model"
    loop.symlink_to(tmp_path / "other")
    (tmp_path / "other").symlink_to(loop)
    for attempt in (lambda: resolve_preset(str(loop)), lambda: convert(loop, tmp_path / "out")):
        with pytest.raises(ValueError, match=LOOP) as error:
            attempt()
        assert "\n" not in str(error.value)


def test_a_dangling_link_names_its_target(tmp_path):
    (tmp_path / "model").symlink_to(tmp_path / "gone")
    with pytest.raises(ValueError, match=r"symbolic link to '.*gone', which does not exist"):
        resolve_preset(str(tmp_path / "model"))
