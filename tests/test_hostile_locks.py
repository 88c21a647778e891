"""Lock files and temporaries never write through a link planted at their name.

Every writer takes `OutputLock` (convert, preset saves, exports, a run's output folder,
cache entries, a search's trial folders) and writes through `atomic_path`: a
`.NAME.lock` planted as a link to a victim file must leave the victim untouched and stop
the writer with one sentence naming the lock file; so must a hard link, a FIFO and a
folder at that name, and a link at a temporary's name.
"""

import os
import re
import subprocess
import sys

import pytest

from kbert.checkpoints import convert
from kbert.checkpoints.cache_entry import fill_cache_entry
from kbert.files import FileRefusedError
from kbert.files import OutputLock
from kbert.files import atomic_path
from kbert.files import exclusive_output
from kbert.files import staged_folder
from kbert.files import write_json_atomically
from kbert.files.checked_copy import copy_folder_checked

VICTIM_TEXT = "IMPORTANT\n"


@pytest.fixture(scope="module")
def huggingface_tiny_folder(tmp_path_factory):
    """A tiny classifier exported in Hugging Face's format (a `kbert convert` source)."""
    from kbert.checkpoints import export_huggingface
    from kbert.models import BertBackbone
    from kbert.models import BertClassifier
    from kbert.tokenizer.bert_tokenizer import BertTokenizer
    from model_helpers import TINY

    folder = tmp_path_factory.mktemp("sources") / "huggingface"
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(92)]
    model = BertClassifier(BertBackbone(**TINY), label_names=["a", "b"])
    model.tokenizer = BertTokenizer(vocabulary, max_length=24)
    export_huggingface(model, folder)
    return folder


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / "outside" / "victim.txt"
    path.parent.mkdir()
    path.write_text(VICTIM_TEXT, encoding="utf-8")
    return path


def _plant_link(folder, name, victim):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f".{name}.lock").symlink_to(victim)


def _assert_untouched(victim):
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT


class _Run:
    """A stand-in for a training run: `exclusive_output` locks its `output_dir`."""

    def __init__(self, output_dir):
        self.output_dir = output_dir
        self.checkpoint = self
        self.ran = False

    def remove_stale_files(self):
        pass

    @exclusive_output
    def run(self):
        self.ran = True


def _write_preset(folder):
    from kbert.models import BertBackbone
    from model_helpers import TINY

    BertBackbone(**TINY).save_to_preset(folder)


WRITERS = {
    "a plain OutputLock": lambda out: OutputLock(out).acquire(),
    "a staged folder (presets, exports)": lambda out: staged_folder(out).__enter__(),
    "a preset save": _write_preset,
    "a training run's output folder": lambda out: _Run(out).run(),
    "a cache entry": lambda out: fill_cache_entry(out, lambda folder: None, wait_seconds=0),
    "a search's trial folder": lambda out: OutputLock(out / "trials" / "trial-000").acquire(),
}


@pytest.mark.parametrize("writer", WRITERS)
def test_a_lock_file_linked_to_a_victim_stops_every_writer(tmp_path, victim, writer):
    output = tmp_path / "out" / "dst"
    locked = output / "trials" / "trial-000" if "trial" in writer else output
    _plant_link(locked.parent, locked.name, victim)
    with pytest.raises(FileRefusedError, match=r"Refusing to write .*\.lock.*symbolic link"):
        WRITERS[writer](output)
    _assert_untouched(victim)


def test_a_conversion_to_a_folder_with_a_linked_lock_leaves_the_victim(
    tmp_path, victim, huggingface_tiny_folder
):
    _plant_link(tmp_path / "out", "dst", victim)
    with pytest.raises(FileRefusedError, match="symbolic link"):
        convert(huggingface_tiny_folder, tmp_path / "out" / "dst")
    _assert_untouched(victim)


@pytest.mark.slow
def test_kbert_convert_says_so_in_one_line(tmp_path, victim, huggingface_tiny_folder):
    _plant_link(tmp_path / "out", "dst", victim)
    environment = dict(os.environ, KERAS_BACKEND="numpy", TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(
        [sys.executable, "-m", "kbert.cli", "convert", str(huggingface_tiny_folder),
         str(tmp_path / "out" / "dst")],
        capture_output=True, text=True, env=environment, timeout=300,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "symbolic link" in errors[0], done.stderr
    _assert_untouched(victim)


@pytest.mark.parametrize("planted", ["hard link", "fifo", "folder"])
def test_a_lock_name_taken_by_anything_but_a_lock_file_is_refused(tmp_path, victim, planted):
    lock_path = tmp_path / ".dst.lock"
    if planted == "hard link":
        try:
            os.link(victim, lock_path)
        except OSError:
            pytest.skip("this file system has no hard links across these folders")
    elif planted == "fifo":
        os.mkfifo(lock_path)
    else:
        lock_path.mkdir()
    with pytest.raises(FileRefusedError, match=r"\.dst\.lock"):
        OutputLock(tmp_path / "dst").acquire()
    _assert_untouched(victim)


def test_a_lock_in_a_linked_folder_is_not_taken(tmp_path, victim):
    (tmp_path / "real").mkdir()
    lock = OutputLock(tmp_path / "real" / "dst")
    # The folder swapped for a link after the lock resolved its path.
    (tmp_path / "real").rename(tmp_path / "moved")
    (tmp_path / "real").symlink_to(victim.parent)
    with pytest.raises(FileRefusedError, match="not a real folder"):
        lock.acquire()
    assert sorted(os.listdir(victim.parent)) == ["victim.txt"]


def test_a_stale_lock_cleanup_never_follows_a_link(tmp_path, victim):
    _plant_link(tmp_path, "dst", victim)
    OutputLock(tmp_path / "dst").remove_stale()
    _assert_untouched(victim)
    assert (tmp_path / ".dst.lock").is_symlink()  # left for the writer to refuse


def test_a_link_at_a_temporary_name_is_never_written_through(tmp_path, victim, monkeypatch):
    import secrets

    names = iter(["deadbeef", "cafebabe"])
    monkeypatch.setattr(secrets, "token_hex", lambda count: next(names))
    target = tmp_path / "report.json"
    (tmp_path / f".report.json.tmp-{os.getpid()}-deadbeef").symlink_to(victim)
    write_json_atomically(target, {"ok": True})
    _assert_untouched(victim)
    assert target.read_text(encoding="utf-8").strip().startswith("{")
    assert not target.is_symlink()


def test_a_temporary_swapped_for_a_link_is_not_moved_into_place(tmp_path, victim):
    target = tmp_path / "weights.bin"
    with pytest.raises(FileRefusedError, match="replaced while written"):
        with atomic_path(target) as temporary:
            os.unlink(temporary)
            os.symlink(victim, temporary)
    assert not target.exists()
    _assert_untouched(victim)


def test_a_checked_copy_refuses_links_and_copies_nothing_from_outside(tmp_path, victim):
    source = tmp_path / "trial" / "model"
    source.mkdir(parents=True)
    (source / "config.json").write_text("{}", encoding="utf-8")
    (source / "vocab.txt").symlink_to(victim)
    destination = tmp_path / "copy"
    destination.mkdir()
    with pytest.raises(FileRefusedError, match=re.escape("vocab.txt")):
        copy_folder_checked(source, destination, tmp_path / "trial")
    assert VICTIM_TEXT not in "".join(
        path.read_text(encoding="utf-8") for path in destination.rglob("*") if path.is_file()
    )
    (source / "vocab.txt").unlink()
    (source / "vocab.txt").write_text("[PAD]\n", encoding="utf-8")
    (source / "assets").symlink_to(victim.parent, target_is_directory=True)
    (tmp_path / "copy2").mkdir()
    with pytest.raises(FileRefusedError, match="assets"):
        copy_folder_checked(source, tmp_path / "copy2", tmp_path / "trial")
