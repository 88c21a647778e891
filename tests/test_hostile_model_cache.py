"""The model cache's own files cannot hurt, and its readers wait for each other.

- 8 processes opening one `.keras` file at once: all succeed, one converts it;
- `<cache>/converted/index.json` nested 100,000 deep, or linked to a file outside, is
  ignored (and replaced by a sane one), never followed or recursed into;
- a `.keras` file padded with gigabytes that belong to no member is refused before a
  byte is hashed; a converted archive records its own digest;
- a full disk while a `.keras` file is unpacked is one ENOSPC error naming the file
  being written, not "Refusing to read" the archive.
"""

import errno
import hashlib
import json
import os
import subprocess
import sys

import keras
import pytest
from inference_helpers import VOCABULARY
from inference_helpers import make_tokenizer
from model_helpers import TINY
from process_helpers import PROCESS_PASS_BACKEND

from kbert.checkpoints import keras_archive
from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.presets import resolve_preset

READERS = 8
_READER = """
import sys
import kbert.checkpoints.keras_archive as archive

original = archive.read_keras_archive

def counted(path):
    print("converting", flush=True)
    return original(path)

archive.read_keras_archive = counted
from kbert.presets import resolve_preset
print("ready", flush=True)
sys.stdin.readline()  # every reader starts at once
print("resolved", resolve_preset(sys.argv[1]), flush=True)
"""


@pytest.fixture(scope="module")
def keras_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("keras_file")
    backbone = BertBackbone(**dict(TINY, vocabulary_size=len(VOCABULARY), max_positions=32))
    model = BertClassifier(backbone, label_names=["negative", "positive"])
    model.tokenizer = make_tokenizer(folder, max_length=32)
    path = folder / "sentiment.keras"
    model.save(path)
    return path


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("KBERT_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.mark.slow
def test_eight_processes_opening_one_keras_file_all_succeed_and_one_converts(
    keras_file, private_cache
):
    if keras.backend.backend() != PROCESS_PASS_BACKEND:
        pytest.skip("runs its own processes whatever the test's backend; one pass runs it")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    environment = dict(
        os.environ, KERAS_BACKEND="numpy", TF_CPP_MIN_LOG_LEVEL="3", KBERT_CACHE=str(private_cache),
        PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]),
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _READER, str(keras_file)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment,
        )
        for _ in range(READERS)
    ]
    for process in processes:  # each past its imports
        assert process.stdout.readline().strip() == "ready", process.stderr.read()[-2000:]
    for process in processes:
        process.stdin.write("go\n")
        process.stdin.flush()
    outcomes = [(process.wait(timeout=600), *process.communicate()) for process in processes]
    failures = [stderr[-1500:] for code, _, stderr in outcomes if code != 0]
    assert failures == []
    stdouts = [stdout for _, stdout, _ in outcomes]
    assert sum(stdout.count("converting") for stdout in stdouts) == 1
    resolved = {
        line.split(" ", 1)[1] for stdout in stdouts for line in stdout.splitlines()
        if line.startswith("resolved")
    }
    assert len(resolved) == 1


def test_a_converted_archive_records_its_own_digest(keras_file, private_cache):
    preset = resolve_preset(keras_file)
    metadata = json.loads((preset / "metadata.json").read_text(encoding="utf-8"))
    assert metadata["source_sha256"] == hashlib.sha256(keras_file.read_bytes()).hexdigest()


def test_an_archive_padded_with_gigabytes_is_refused_before_it_is_hashed(
    keras_file, tmp_path, monkeypatch
):
    padded = tmp_path / "padded.keras"
    with open(padded, "wb") as file:
        file.seek(2**31)  # a sparse hole: 2 GiB that take no disk
        file.write(keras_file.read_bytes())
    hashed = []
    real_sha256 = hashlib.sha256

    class Spy:
        def __init__(self):
            self.inner = real_sha256()

        def update(self, data):
            hashed.append(len(data))
            self.inner.update(data)

        def hexdigest(self):
            return self.inner.hexdigest()

    monkeypatch.setattr(keras_archive.hashlib, "sha256", Spy)
    with pytest.raises(ValueError, match="belongs to no member"):
        resolve_preset(padded)
    assert hashed == []


@pytest.mark.parametrize("hostile", ["deep", "linked", "huge"])
def test_a_hostile_index_of_converted_folders_is_ignored(tmp_path, private_cache, hostile, caplog):
    from checkpoint_helpers import write_huggingface_folder

    index = private_cache / "converted" / "index.json"
    index.parent.mkdir(parents=True)
    victim = tmp_path / "victim.json"
    victim.write_text('{"keep": "me"}', encoding="utf-8")
    if hostile == "deep":
        index.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    elif hostile == "linked":
        index.symlink_to(victim)
    else:
        with open(index, "wb") as file:
            file.truncate(300 * 2**20)  # 300 MB, sparse
    source = write_huggingface_folder(tmp_path / "huggingface")
    preset = resolve_preset(source)
    assert (preset / "model.weights.h5").is_file()
    assert "Ignoring" in caplog.text and "index.json" in caplog.text
    assert victim.read_text(encoding="utf-8") == '{"keep": "me"}'
    assert not index.is_symlink()
    remembered = json.loads(index.read_text(encoding="utf-8"))
    assert list(remembered) == [str(source.resolve())]
    assert resolve_preset(source) == preset


def test_a_full_disk_while_unpacking_names_the_file_written(keras_file, monkeypatch):
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, file):
            self.file = file

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            self.file.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    def fdopen(descriptor, mode="r", *args, **kwargs):
        file = real_fdopen(descriptor, mode, *args, **kwargs)
        return Full(file) if "w" in mode else file

    monkeypatch.setattr(keras_archive.os, "fdopen", fdopen)
    with pytest.raises(OSError) as raised:
        keras_archive.read_keras_archive(keras_file)
    assert raised.value.errno == errno.ENOSPC
    message = str(raised.value)
    assert "No space left on the device while writing" in message
    assert "kbert-keras-" in message and "Refusing" not in message


def test_a_cache_entry_planted_as_a_link_is_removed_not_followed(tmp_path, caplog):
    from kbert.checkpoints.cache_entry import fill_cache_entry

    outside = tmp_path / "outside" / "preset"
    outside.mkdir(parents=True)
    (outside / "config.json").write_text("{}", encoding="utf-8")
    entry = tmp_path / "cache" / "converted" / "entry"
    entry.parent.mkdir(parents=True)
    entry.symlink_to(outside, target_is_directory=True)
    written = []

    def write(folder):
        written.append(folder)
        folder.mkdir()

    assert fill_cache_entry(entry, write) == entry
    assert written == [entry] and entry.is_dir() and not entry.is_symlink()
    assert sorted(path.name for path in outside.parent.iterdir()) == ["preset"]  # no lock
    assert (outside / "config.json").read_text(encoding="utf-8") == "{}"
    assert "Removing" in caplog.text


def test_what_killed_writers_left_beside_an_entry_goes_on_the_next_use(tmp_path, victim_text="x"):
    from kbert.checkpoints.cache_entry import fill_cache_entry
    from kbert.files import OutputLock

    cache = tmp_path / "converted"
    cache.mkdir()
    dead = 2**22 + 12345  # above Linux's default pid_max: no process has it
    (cache / ".other.lock").write_text(f"{dead}\n")  # nobody holds it
    (cache / f".other.tmp-{dead}-0a1b2c3d").write_text("half a file")
    (cache / f".other.tmp-{dead}-1a2b3c4d").mkdir()  # a staging folder
    (cache / f".live.tmp-{os.getpid()}-5e6f7a8b").write_text("being written")
    held = OutputLock(cache / "held")
    held.acquire()
    outside = tmp_path / "outside.txt"
    outside.write_text(victim_text)
    (cache / ".planted.lock").symlink_to(outside)
    try:
        fill_cache_entry(cache / "entry", lambda folder: folder.mkdir())
        left = sorted(path.name for path in cache.iterdir())
    finally:
        held.release()
    assert left == [".held.lock", f".live.tmp-{os.getpid()}-5e6f7a8b", ".planted.lock", "entry"]
    assert outside.read_text() == victim_text
