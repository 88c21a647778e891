"""A model folder's files stay inside it by real path, folders on the way included.

A keras-hub folder keeps its vocabulary two folders down (`assets/tokenizer/`); a link
on that way, or one swapped in while the folder is read, must never lead kbert to a file
outside: the secret kept there is never opened (recorded through a patched `os.open`,
by inode) and never appears in what kbert returns or writes.
"""

import os
import pathlib
import shutil
import threading
import time

import pytest

from kbert.architecture.bert_config import BertConfig
from kbert.checkpoints import convert
from kbert.checkpoints import export_keras_hub
from kbert.checkpoints.keras_hub_preset import read_keras_hub_tokenizer
from kbert.files import FileRefusedError
from kbert.files import read_bytes
from kbert.models import BertBackbone
from kbert.tokenizer import BertTokenizer

from model_helpers import TINY

SECRET = "secret_token_never_to_be_read"
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [
    f"word{index}" for index in range(TINY["vocabulary_size"] - 5)
]


@pytest.fixture(scope="module")
def keras_hub_base(tmp_path_factory):
    """A tiny keras-hub preset folder written by kbert's exporter."""
    backbone = BertBackbone(**TINY, activation="gelu_approximate")
    tokenizer = BertTokenizer(VOCABULARY, max_length=TINY["max_positions"])
    folder = tmp_path_factory.mktemp("base") / "keras_hub"
    export_keras_hub(backbone, folder, tokenizer=tokenizer)
    assert (folder / "assets" / "tokenizer" / "vocabulary.txt").is_file()
    return folder


@pytest.fixture
def keras_hub(tmp_path, keras_hub_base):
    folder = tmp_path / "model" / "keras_hub"
    shutil.copytree(keras_hub_base, folder)
    return folder


@pytest.fixture
def outside(tmp_path):
    """`outside/tokenizer/vocabulary.txt`: a vocabulary that would load, with a secret."""
    folder = tmp_path / "outside"
    (folder / "tokenizer").mkdir(parents=True)
    secret = folder / "tokenizer" / "vocabulary.txt"
    secret.write_text("".join(token + "\n" for token in VOCABULARY[:-1] + [SECRET]))
    return folder


@pytest.fixture
def opened_inodes(monkeypatch):
    """Every (device, inode) that `os.open` opens from now on."""
    opened = set()
    original = os.open

    def recording_open(*args, **kwargs):
        descriptor = original(*args, **kwargs)
        status = os.fstat(descriptor)
        opened.add((status.st_dev, status.st_ino))
        return descriptor

    monkeypatch.setattr(os, "open", recording_open)
    return opened


def identity(path):
    status = os.stat(path)
    return status.st_dev, status.st_ino


def files_holding_secret(root, outside):
    return [
        str(path)
        for path in pathlib.Path(root).rglob("*")
        if path.is_file()
        and not path.is_symlink()
        and outside not in path.parents
        and SECRET.encode() in path.read_bytes()
    ]


def test_a_linked_tokenizer_folder_is_refused_and_nothing_is_copied(
    tmp_path, keras_hub, outside, opened_inodes
):
    shutil.rmtree(keras_hub / "assets" / "tokenizer")
    (keras_hub / "assets" / "tokenizer").symlink_to(outside / "tokenizer")
    with pytest.raises(FileRefusedError, match=r"vocabulary\.txt.*outside the folder"):
        convert(keras_hub, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert identity(outside / "tokenizer" / "vocabulary.txt") not in opened_inodes
    assert files_holding_secret(tmp_path, outside) == []


def test_a_linked_intermediate_folder_is_refused(tmp_path, keras_hub, outside, opened_inodes):
    shutil.rmtree(keras_hub / "assets")
    (keras_hub / "assets").symlink_to(outside, target_is_directory=True)
    with pytest.raises(FileRefusedError, match="outside the folder"):
        convert(keras_hub, tmp_path / "out")
    assert identity(outside / "tokenizer" / "vocabulary.txt") not in opened_inodes
    assert files_holding_secret(tmp_path, outside) == []


def test_a_link_inside_the_folder_still_reads(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "vocab.txt").write_text("[PAD]\n")
    (tmp_path / "linked").symlink_to(tmp_path / "real", target_is_directory=True)
    assert read_bytes(tmp_path / "linked" / "vocab.txt", "vocabulary", tmp_path) == b"[PAD]\n"


def swap_assets_for_a_link(folder, outside, times, done):
    """Swaps `folder/assets` for a link to `outside` and back, `times` times."""
    assets, kept = folder / "assets", folder / "assets.kept"
    try:
        for _ in range(times):
            os.rename(assets, kept)
            os.symlink(outside, assets, target_is_directory=True)
            time.sleep(0.0005)
            os.unlink(assets)
            os.rename(kept, assets)
            time.sleep(0.0005)
    finally:
        done.set()


def test_a_folder_swapped_for_a_link_while_read_never_leaks(keras_hub, outside, opened_inodes):
    config = BertConfig.from_dict(
        {key: value for key, value in TINY.items() if "dropout" not in key}
    )
    done = threading.Event()
    mutator = threading.Thread(target=swap_assets_for_a_link, args=(keras_hub, outside, 100, done))
    leaks, loads, refusals = 0, 0, 0
    mutator.start()
    try:
        while not done.is_set():
            try:
                tokenizer = read_keras_hub_tokenizer(keras_hub, config)
            except ValueError:
                refusals += 1
                continue
            loads += 1
            if tokenizer is not None and SECRET in tokenizer.vocabulary:
                leaks += 1
    finally:
        mutator.join()
    assert leaks == 0
    assert identity(outside / "tokenizer" / "vocabulary.txt") not in opened_inodes
    assert loads + refusals > 0
    # Once the folder is whole again, it reads.
    assert list(read_keras_hub_tokenizer(keras_hub, config).vocabulary) == VOCABULARY


def test_a_folder_swapped_for_a_link_after_the_check_is_not_followed(
    tmp_path, keras_hub, outside, opened_inodes, monkeypatch
):
    """The window the path check cannot close: the open walks the folders it checked."""
    from kbert.files import bounded_reader

    original = bounded_reader.checked_path

    def check_then_swap(path, folder=None):
        real = original(path, folder)
        os.rename(keras_hub / "assets", keras_hub / "assets.kept")
        (keras_hub / "assets").symlink_to(outside, target_is_directory=True)
        return real

    monkeypatch.setattr(bounded_reader, "checked_path", check_then_swap)
    vocabulary = keras_hub / "assets" / "tokenizer" / "vocabulary.txt"
    with pytest.raises(FileRefusedError, match="replaced by a link while it was opened"):
        read_bytes(vocabulary, "vocabulary", keras_hub)
    assert identity(outside / "tokenizer" / "vocabulary.txt") not in opened_inodes
