"""One writer per output folder: a second one fails at once, naming the first one's pid.

The holder is a real second process (a child holding `OutputLock`), so the lock is the
kernel's, not this process's bookkeeping. The races run two real `kbert convert`
processes on Keras' NumPy backend.
"""

import os
import re
import subprocess
import sys
import threading

import pytest

from kbert.checkpoints import convert
from kbert.checkpoints import export_huggingface
from kbert.files import OutputLock
from kbert.files import OutputLockedError
from kbert.files import output_lock
from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.presets import resolve_preset
from kbert.tokenizer.bert_tokenizer import BertTokenizer

from model_helpers import TINY

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(92)]
_HOLDER = """
import sys
from kbert.files import OutputLock
with OutputLock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""


def _environment():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return dict(
        os.environ,
        KERAS_BACKEND="numpy",
        TF_CPP_MIN_LOG_LEVEL="3",
        PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]),
    )


@pytest.fixture
def holder():
    """Starts a process holding the lock of a folder; yields (start, pid)."""
    processes = []

    def start(folder):
        process = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(folder)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=_environment(),
        )
        assert process.stdout.readline().strip() == "held"
        processes.append(process)
        return process.pid

    yield start
    for process in processes:
        process.stdin.close()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def huggingface_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sources") / "huggingface"
    model = BertClassifier(BertBackbone(**TINY), label_names=["a", "b"])
    model.tokenizer = BertTokenizer(VOCABULARY, max_length=24)
    export_huggingface(model, folder)
    return folder


def _refused_by(pid):
    return pytest.raises(OutputLockedError, match=rf"being written by process {pid}\b")


def test_a_conversion_to_a_locked_destination_fails_naming_the_holder(
    tmp_path, holder, huggingface_folder
):
    destination = tmp_path / "preset"
    pid = holder(destination)
    with _refused_by(pid):
        convert(huggingface_folder, destination)
    assert not destination.exists()


def test_preset_saves_and_exports_to_a_locked_folder_fail(tmp_path, holder):
    model = BertBackbone(**TINY)
    pid = holder(tmp_path / "preset")
    with _refused_by(pid):
        model.save_to_preset(tmp_path / "preset")
    pid = holder(tmp_path / "export")
    with _refused_by(pid):
        export_huggingface(model, tmp_path / "export")
    assert sorted(os.listdir(tmp_path)) == [".export.lock", ".preset.lock"]


def test_training_runs_on_a_locked_output_fail_before_reading_anything(tmp_path, holder):
    from kbert.pretraining import PretrainingLoop
    from kbert.finetuning import FineTuner

    pid = holder(tmp_path / "run")
    with _refused_by(pid):
        FineTuner("classification", "demo", tmp_path / "run").run(tmp_path / "missing.csv")
    with _refused_by(pid):
        PretrainingLoop(tmp_path / "run").run(tmp_path / "missing-shards", init_from="demo")
    assert not (tmp_path / "run").exists()


def test_the_lock_is_reentrant_in_its_thread_and_refused_to_others(tmp_path):
    folder = tmp_path / "out"
    errors = []
    with OutputLock(folder):
        with OutputLock(folder):
            assert (tmp_path / ".out.lock").read_text().strip() == str(os.getpid())

        def other_thread():
            try:
                OutputLock(folder).acquire()
            except OutputLockedError as error:
                errors.append(error)

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert (tmp_path / ".out.lock").exists()
    assert len(errors) == 1 and "another thread of this process" in str(errors[0])
    assert errors[0].holder_pid == os.getpid()
    # Released by the outermost exit, and the lock file removed.
    assert not (tmp_path / ".out.lock").exists()
    with OutputLock(folder):
        pass


def test_a_killed_holder_leaves_a_lock_that_the_next_writer_takes(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path / "preset")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_environment(),
    )
    assert process.stdout.readline().strip() == "held"
    process.kill()
    process.wait()
    assert (tmp_path / ".preset.lock").read_text().strip() == str(process.pid)
    # Loading cleans the stale lock file up; writing takes the lock.
    BertBackbone(**TINY).save_to_preset(tmp_path / "preset")
    assert sorted(os.listdir(tmp_path)) == ["preset"]
    (tmp_path / ".preset.lock").write_text(f"{process.pid}\n")
    resolve_preset(tmp_path / "preset")
    assert sorted(os.listdir(tmp_path)) == ["preset"]


def test_without_fcntl_writes_go_ahead_with_a_warning(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(output_lock, "fcntl", None)
    monkeypatch.setattr(output_lock, "_warned_unlocked", [])
    BertBackbone(**TINY).save_to_preset(tmp_path / "preset")
    assert (tmp_path / "preset" / "config.json").is_file()
    assert "without a lock (this platform has no fcntl)" in caplog.text


def _convert_processes(source, destination, *options):
    command = [sys.executable, "-m", "kbert.cli", "convert", str(source), str(destination)]
    return [
        subprocess.Popen(
            [*command, *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_environment(),
        )
        for _ in range(2)
    ]


def test_two_conversions_to_one_destination_exactly_one_wins(tmp_path, huggingface_folder):
    destination = tmp_path / "preset"
    processes = _convert_processes(huggingface_folder, destination)
    outcomes = [(process.wait(timeout=300), process.stderr.read()) for process in processes]
    codes = sorted(code for code, _ in outcomes)
    assert codes == [0, 1], outcomes
    (loser,) = [stderr for code, stderr in outcomes if code == 1]
    assert re.search(r"is being written by process \d+|exists and is not empty", loser), loser
    assert BertClassifier.from_preset(destination).num_classes == 2
    assert sorted(os.listdir(tmp_path)) == ["preset"]


def test_two_overwriting_conversions_leave_one_complete_preset(tmp_path, huggingface_folder):
    destination = tmp_path / "preset"
    convert(huggingface_folder, destination)
    processes = _convert_processes(huggingface_folder, destination, "--overwrite")
    outcomes = [(process.wait(timeout=300), process.stderr.read()) for process in processes]
    for code, stderr in outcomes:
        # Either both ran one after the other, or the second found the first writing.
        assert code == 0 or re.search(r"is being written by process \d+", stderr), stderr
    assert 0 in [code for code, _ in outcomes]
    assert BertClassifier.from_preset(destination).num_classes == 2
    assert sorted(os.listdir(tmp_path)) == ["preset"]

