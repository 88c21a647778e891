"""Saves killed at random points leave the old or the new preset, and no stray files.

The kill test runs in a worker process (this file run as a script) on Keras' NumPy
backend, which starts no threads, so the worker can `fork` one child per save and kill
it for real with SIGKILL. Half of the kills come from a timer at a random moment of the
save; the other half from the child killing itself just before its k-th file-system
operation (mkdir, rename, fsync, unlink, ...), k random, which reaches every step of the
save, including the instant between moving the old folder aside and moving the new one
in. After each kill the worker loads the folder the way users do and records what it
found.
"""

import errno
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from process_helpers import on_the_process_pass

pytestmark = on_the_process_pass("the kills run in a worker process on Keras' NumPy backend")

KILLS = 20
WORKER_SIZE = dict(
    vocabulary_size=40,
    hidden_size=16,
    num_layers=1,
    num_heads=2,
    intermediate_size=20,
    max_positions=16,
)
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(35)]
# File-system calls a save makes; the step-mode child dies just before one of them.
HOOKED_CALLS = ("mkdir", "rename", "replace", "fsync", "unlink", "rmdir", "open")


def _leftovers(parent):
    return sorted(name for name in os.listdir(parent) if name != "preset")


def run_worker(workdir, kills, seed):
    """Saves, kills and checks `kills` times; prints one JSON list of findings."""
    import keras

    from kbert.models import BertBackbone
    from kbert.presets import resolve_preset
    from kbert.tokenizer.bert_tokenizer import BertTokenizer

    assert keras.backend.backend() == "numpy"
    workdir = pathlib.Path(workdir)
    folder = workdir / "presets" / "preset"
    folder.parent.mkdir(parents=True)
    tokenizer = BertTokenizer(VOCABULARY, max_length=16)
    keras.utils.set_random_seed(seed)
    models = {"a": BertBackbone(**WORKER_SIZE), "b": BertBackbone(**WORKER_SIZE)}
    fingerprints = {
        name: [keras.ops.convert_to_numpy(v).tolist() for v in model.weights]
        for name, model in models.items()
    }

    def save(version, target):
        models[version].save_to_preset(target, tokenizer=tokenizer, metadata={"version": version})

    # A dry run measures the save: its duration, and its file-system calls in order.
    scratch = workdir / "scratch" / "preset"
    save("a", scratch)
    calls = []
    originals = {name: getattr(os, name) for name in HOOKED_CALLS}

    def hook(name, action):
        original = originals[name]

        def hooked(*args, **kwargs):
            action(name, args)
            return original(*args, **kwargs)

        return hooked

    for name in HOOKED_CALLS:
        setattr(os, name, hook(name, lambda name, args: calls.append((name, str(args[:2])))))
    start = time.perf_counter()
    save("b", scratch)
    duration = time.perf_counter() - start
    for name, original in originals.items():
        setattr(os, name, original)
    # The window between the two renames: just before `rename(staging, folder)`.
    window = next(
        index + 1
        for index, (name, args) in enumerate(calls)
        if name == "rename" and ".tmp-" in args.split(",")[0]
    )

    rng = random.Random(seed)
    # The window itself, a kill after the swap (the new version must then be found),
    # and steps drawn from the whole save.
    after_swap = rng.randint(window + 1, len(calls))
    steps = [window, after_swap] + [rng.randint(1, len(calls)) for _ in range(kills // 2 - 2)]
    save("a", folder)
    current = "a"
    findings = []
    for trial in range(kills):
        mode = "step" if trial % 2 == 0 else "timer"
        saving = "b" if current == "a" else "a"
        kill_at = steps[trial // 2] if mode == "step" else None
        child = os.fork()
        if child == 0:
            if mode == "step":
                counter = [0]

                def maybe_die(name, args, counter=counter, kill_at=kill_at):
                    counter[0] += 1
                    if counter[0] == kill_at:
                        os.kill(os.getpid(), signal.SIGKILL)

                for name in HOOKED_CALLS:
                    setattr(os, name, hook(name, maybe_die))
            try:
                save(saving, folder)
            finally:
                os._exit(0)
        if mode == "timer":
            time.sleep(rng.uniform(0, 1.2 * duration))
            os.kill(child, signal.SIGKILL)
        _, status = os.waitpid(child, 0)
        killed = os.WIFSIGNALED(status)
        missing_before_load = not folder.exists()

        resolve_preset(folder)  # what every load does first: recover, clean up
        loaded = BertBackbone.from_preset(folder)
        version = json.loads((folder / "metadata.json").read_text())["version"]
        weights = [keras.ops.convert_to_numpy(v).tolist() for v in loaded.weights]
        findings.append(
            {
                "mode": mode,
                "kill_at": kill_at,
                "killed": killed,
                "previous": current,
                "saving": saving,
                "found": version,
                "weights_match": weights == fingerprints[version],
                "tokenizer_ok": BertTokenizer.from_preset(folder).vocabulary == VOCABULARY,
                "missing_before_load": missing_before_load,
                "leftovers": _leftovers(folder.parent),
            }
        )
        current = version
    print(json.dumps({"calls": len(calls), "window": window, "findings": findings}))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill test forks")
def test_killed_saves_leave_the_old_or_the_new_preset(tmp_path):
    # One-thread numerics: nothing in the worker runs in a thread a fork could split.
    environment = dict(
        os.environ,
        KERAS_BACKEND="numpy",
        TF_CPP_MIN_LOG_LEVEL="3",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
    )
    result = subprocess.run(
        [sys.executable, __file__, str(tmp_path), str(KILLS), "7"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=pathlib.Path(__file__).parent,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    findings = report["findings"]
    assert len(findings) == KILLS
    for finding in findings:
        assert finding["found"] in (finding["previous"], finding["saving"]), finding
        assert finding["weights_match"] and finding["tokenizer_ok"], finding
        assert finding["leftovers"] == [], finding
    # The kills reached the saves: mid-way kills, and the rename window, where the
    # folder was briefly absent and the previous version had to be restored.
    assert sum(finding["killed"] for finding in findings) >= KILLS // 2
    window_trial = findings[0]
    assert window_trial["kill_at"] == report["window"] and window_trial["missing_before_load"]
    assert window_trial["found"] == window_trial["previous"]
    assert {finding["found"] for finding in findings} == {"a", "b"}

    # The surviving preset loads in this process's backend too.
    from kbert.models import BertBackbone

    assert BertBackbone.from_preset(tmp_path / "presets" / "preset").count_params() > 0


def _dead_process_id():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_crash_between_the_renames_is_recovered_on_load(tmp_path):
    from model_helpers import TINY

    from kbert.models import BertBackbone
    from kbert.presets import resolve_preset

    model = BertBackbone(**TINY)
    model.save_to_preset(tmp_path / "preset")
    # What a save killed between its renames leaves: the old version retired, the new
    # one staged, nothing at the preset's own name.
    pid = _dead_process_id()
    retired = tmp_path / f".preset.old-{pid}-1a2b3c4d"
    retired.mkdir()
    os.rename(tmp_path / "preset", retired / "preset")
    staging = tmp_path / f".preset.tmp-{pid}-5e6f7a8b"
    staging.mkdir()
    (staging / "config.json").write_text("{")
    # A running save's staging folder (this process's) must be left alone.
    running = tmp_path / f".preset.tmp-{os.getpid()}-00000000"
    running.mkdir()

    restored = BertBackbone.from_preset(tmp_path / "preset")
    for left, right in zip(restored.weights, model.weights):
        np.testing.assert_array_equal(np.asarray(left), np.asarray(right))
    assert sorted(os.listdir(tmp_path)) == [running.name, "preset"]
    running.rmdir()

    # A half-deleted retired copy (renamed to `discarded` before deletion) is never restored.
    retired = tmp_path / f".preset.old-{pid}-99999999"
    (retired / "discarded").mkdir(parents=True)
    assert resolve_preset(tmp_path / "preset") == tmp_path / "preset"
    assert sorted(os.listdir(tmp_path)) == ["preset"]


def test_a_failed_export_leaves_the_previous_export(tmp_path, monkeypatch):
    from model_helpers import TINY

    import safetensors.numpy

    from kbert.checkpoints import export_huggingface
    from kbert.models import BertBackbone

    model = BertBackbone(**TINY)
    export_huggingface(model, tmp_path / "export")
    before = (tmp_path / "export" / "model.safetensors").read_bytes()

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safetensors.numpy, "save_file", disk_full)
    with pytest.raises(OSError, match="No space left"):
        export_huggingface(BertBackbone(**TINY), tmp_path / "export", overwrite=True)
    assert (tmp_path / "export" / "model.safetensors").read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["export"]


# --- A full disk --------------------------------------------------------------------------


def _disk_fills_at_dataset(monkeypatch, number):
    """h5py's create_dataset fails with ENOSPC from its `number`-th call on, as on a full disk."""
    import h5py

    original = h5py.Group.create_dataset
    calls = []

    def create_dataset(self, name, *args, **kwargs):
        calls.append(name)
        if len(calls) >= number:
            raise OSError(errno.ENOSPC, "Can't synchronously write data (No space left on device)")
        return original(self, name, *args, **kwargs)

    monkeypatch.setattr(h5py.Group, "create_dataset", create_dataset)
    return calls


def _snapshot(folder):
    return {path.name: path.read_bytes() for path in sorted(pathlib.Path(folder).iterdir())}


def test_a_full_disk_during_a_preset_save_keeps_the_old_preset(tmp_path, monkeypatch):
    from model_helpers import TINY

    from kbert.models import BertBackbone

    BertBackbone(**TINY).save_to_preset(tmp_path / "preset")
    before = _snapshot(tmp_path / "preset")
    calls = _disk_fills_at_dataset(monkeypatch, 5)
    with pytest.raises(OSError) as error:
        BertBackbone(**TINY).save_to_preset(tmp_path / "preset")
    assert len(calls) >= 5  # the write had started
    assert error.value.errno == errno.ENOSPC
    assert "No space left on the device while writing" in str(error.value)
    assert _snapshot(tmp_path / "preset") == before
    assert sorted(os.listdir(tmp_path)) == ["preset"]


def test_a_save_that_cannot_fit_is_refused_before_writing(tmp_path, monkeypatch):
    import shutil

    import h5py

    from model_helpers import TINY

    from kbert.models import BertBackbone

    BertBackbone(**TINY).save_to_preset(tmp_path / "preset")
    before = _snapshot(tmp_path / "preset")
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage._replace(free=4096))
    monkeypatch.setattr(
        h5py.Group, "create_dataset", lambda *a, **k: pytest.fail("h5py started writing")
    )
    with pytest.raises(OSError, match=r"Not enough free space to write .*preset.*: it needs about .* MiB .* and only 4.0 KiB are free"):
        BertBackbone(**TINY).save_to_preset(tmp_path / "preset")
    assert _snapshot(tmp_path / "preset") == before
    assert sorted(os.listdir(tmp_path)) == ["preset"]


def test_a_full_disk_during_a_safetensors_export_is_an_os_error(tmp_path, monkeypatch):
    from model_helpers import TINY

    import safetensors.numpy
    from safetensors import SafetensorError

    from kbert.checkpoints import export_huggingface
    from kbert.models import BertBackbone

    export_huggingface(BertBackbone(**TINY), tmp_path / "export")
    before = _snapshot(tmp_path / "export")

    def disk_full(*args, **kwargs):
        raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

    monkeypatch.setattr(safetensors.numpy, "save_file", disk_full)
    with pytest.raises(OSError) as error:
        export_huggingface(BertBackbone(**TINY), tmp_path / "export", overwrite=True)
    assert error.value.errno == errno.ENOSPC and "model.safetensors" in str(error.value)
    assert _snapshot(tmp_path / "export") == before
    assert sorted(os.listdir(tmp_path)) == ["export"]


def test_a_full_disk_during_a_training_checkpoint_keeps_the_previous_one(tmp_path, monkeypatch):
    from model_helpers import TINY

    from kbert.models import BertClassifier, BertBackbone
    from kbert.training.training_checkpoint import TrainingCheckpoint

    model = BertClassifier(BertBackbone(**TINY), num_classes=2)
    model.compile()
    checkpoint = TrainingCheckpoint(tmp_path / "training_checkpoint.h5")
    checkpoint.save(model, {"global_step": 1})
    before = checkpoint.path.read_bytes()
    _disk_fills_at_dataset(monkeypatch, 3)
    with pytest.raises(OSError) as error:
        checkpoint.save(model, {"global_step": 2})
    assert error.value.errno == errno.ENOSPC
    assert checkpoint.path.read_bytes() == before
    assert checkpoint.read_state()["global_step"] == 1
    assert sorted(os.listdir(tmp_path)) == ["training_checkpoint.h5"]


# --- A kill during a training checkpoint -------------------------------------------------

_KILLED_CHECKPOINT = """
import os, signal, sys
from kbert.models import BertBackbone, BertClassifier
from kbert.training.training_checkpoint import TrainingCheckpoint
import kbert.training.training_checkpoint as training_checkpoint

def half_written(path, weights):
    with open(path, "wb") as file:
        file.write(b"\\x89HDF half of a checkpoint")
        file.flush()
    print(path, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

training_checkpoint.write_weights = half_written
model = BertClassifier(BertBackbone(vocabulary_size=97, hidden_size=32, num_layers=2,
    num_heads=4, intermediate_size=37, max_positions=24), num_classes=2)
model.compile()
TrainingCheckpoint(sys.argv[1]).save(model, {"global_step": 3})
"""


def test_no_temporary_of_a_killed_checkpoint_write_survives_the_next_resume(tmp_path):
    from model_helpers import TINY

    from kbert.models import BertBackbone
    from kbert.finetuning import FineTuner, FineTuningConfig
    from kbert.tokenizer.bert_tokenizer import BertTokenizer

    run = tmp_path / "run"
    run.mkdir()
    environment = dict(os.environ, KERAS_BACKEND="numpy", TF_CPP_MIN_LOG_LEVEL="3")
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")]
    )
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_CHECKPOINT, str(run / "training_checkpoint.h5")],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    temporary = pathlib.Path(killed.stdout.strip().splitlines()[-1])
    assert temporary.name.startswith(".training_checkpoint.h5.tmp-") and temporary.exists()

    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "bad", "film"]
    vocabulary += [f"w{i}" for i in range(TINY["vocabulary_size"] - len(vocabulary))]
    BertBackbone(**TINY).save_to_preset(
        tmp_path / "preset", tokenizer=BertTokenizer(vocabulary, max_length=24)
    )
    data = tmp_path / "train.csv"
    data.write_text("text,label\n" + "good film,pos\nbad film,neg\n" * 4)
    config = FineTuningConfig(epochs=1, batch_size=4, max_length=16, checkpoint_every=None)
    result = FineTuner("classification", tmp_path / "preset", run, config).run(data, resume=True)
    assert result.status == "completed"
    assert sorted(os.listdir(run)) == ["model", "training_checkpoint.h5"]


if __name__ == "__main__":
    run_worker(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
