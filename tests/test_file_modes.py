"""Files kbert writes get the mode the umask gives a new file, whatever wrote them.

A writing library may replace kbert's temporary with an owner-only file of its own
(safetensors does), so the mode is set from the umask before the rename.
"""

import contextlib
import os
import stat

import pytest

from kbert.checkpoints import export_huggingface
from kbert.files import atomic_path
from kbert.files.atomic_write import write_text_atomically
from kbert.models import BertBackbone
from kbert.tokenizer.bert_tokenizer import BertTokenizer

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")


@contextlib.contextmanager
def umask(value):
    previous = os.umask(value)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_an_atomic_write_gets_the_umask_mode(tmp_path, mask, expected):
    with umask(mask):
        write_text_atomically(tmp_path / "notes.txt", "hello\n")
    assert mode(tmp_path / "notes.txt") == expected


def test_a_temporary_a_library_replaced_owner_only_gets_the_umask_mode(tmp_path):
    with umask(0o022), atomic_path(tmp_path / "weights.bin") as temporary:
        own = tmp_path / "library-temporary"
        own.write_bytes(b"weights")
        os.chmod(own, 0o600)
        os.replace(own, temporary)
    assert mode(tmp_path / "weights.bin") == 0o644


def test_a_hugging_face_export_writes_every_file_with_one_mode(tmp_path):
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat"]
    backbone = BertBackbone(
        vocabulary_size=len(vocabulary),
        hidden_size=8,
        num_layers=1,
        num_heads=2,
        intermediate_size=16,
        max_positions=16,
    )
    backbone.save_to_preset(tmp_path / "preset", tokenizer=BertTokenizer(vocabulary))
    with umask(0o022):
        export_huggingface(tmp_path / "preset", tmp_path / "hf")
    modes = {path.name: mode(path) for path in (tmp_path / "hf").iterdir()}
    assert "model.safetensors" in modes
    assert set(modes.values()) == {0o644}, modes
