"""Files built to hurt the user are refused with a clear error before they can act.

(The `.keras` file with a Lambda layer is covered by tests/test_models.py:
`keras.saving.load_model` in safe mode refuses it.)

The hostile-file suite (tests/hostile_file_cases.py) runs in one worker process,
so that its peak memory is that of the hostile cases alone: each case must be refused
with a ValueError or OSError naming the file, within a 10-second alarm, without opening
the sentinel files kept outside the folders, and the whole worker must stay under 1 GB.
"""

import json
import os
import pathlib
import pickle
import re
import struct
import subprocess
import sys

import h5py
import numpy as np
import pytest

from kbert.checkpoints import convert
from kbert.checkpoints.safe_loading import check_safetensors_header
from kbert.models import BertBackbone
from kbert.models.preset_loading import load_checkpoint
from kbert.checkpoints.weights_file import read_weights

from model_helpers import TINY
from hostile_file_cases import EXPECTED
from process_helpers import on_the_process_pass

pytestmark = on_the_process_pass("the hostile cases run in a worker process of their own")

torch = pytest.importorskip("torch")

PEAK_MEMORY_LIMIT_BYTES = 2**30


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory):
    """Runs every hostile case once, in a fresh process; returns its JSON report."""
    workdir = tmp_path_factory.mktemp("hostile")
    # A clean environment: what the parent's backend set up (TensorFlow's and OpenMP's
    # variables) must not change what the worker measures.
    environment = dict(
        {name: os.environ[name] for name in ("PATH", "HOME", "TMPDIR") if name in os.environ},
        KERAS_BACKEND="numpy",
        MKL_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        TF_CPP_MIN_LOG_LEVEL="3",
        OMP_NUM_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
        PYTHONPATH=os.pathsep.join(
            [str(pathlib.Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")]
        ),
    )
    worker = pathlib.Path(__file__).with_name("hostile_file_cases.py")
    result = subprocess.run(
        [sys.executable, str(worker), str(workdir)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_hostile_file_is_refused_clearly(hostile_report, name):
    outcome = hostile_report["results"][name]
    assert outcome["error"] != "timeout", f"{name}: {outcome['message']}"
    expected = EXPECTED[name]
    if expected is None:
        assert outcome["error"] is None, f"{name}: {outcome}"
        return
    assert outcome["error"] is not None, f"{name} was accepted"
    assert outcome["is_value_or_os_error"], f"{name}: {outcome['traceback']}"
    assert re.search(expected, outcome["message"]), f"{name}: {outcome['message']}"


def test_the_hostile_suite_stays_small_and_inside_its_folders(hostile_report):
    assert hostile_report["peak_rss_bytes"] < PEAK_MEMORY_LIMIT_BYTES
    assert hostile_report["opened"] == [], "a file outside the model folders was opened"
    assert hostile_report["leaked"] == [], "a secret was copied into a written file"

HF_CONFIG = {
    "architectures": ["BertModel"],
    "model_type": "bert",
    "vocab_size": 10,
    "hidden_size": 8,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "intermediate_size": 8,
    "max_position_embeddings": 8,
}


class CreatesAFile:
    """Unpickling this calls open(marker, "w"): code from the file running."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def huggingface_folder(folder):
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(HF_CONFIG))
    return folder


# PyTorch warns that a plain pickle uses a protocol it did not write; that is the point.
@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
@pytest.mark.parametrize("container", ["zip", "plain pickle"])
def test_a_pickle_that_would_run_code_is_refused(tmp_path, container):
    folder = huggingface_folder(tmp_path / "hostile")
    marker = tmp_path / "payload-ran"
    state = {"embeddings.word_embeddings.weight": CreatesAFile(marker)}
    if container == "zip":
        torch.save(state, folder / "pytorch_model.bin")  # torch's own zip container
    else:
        with open(folder / "pytorch_model.bin", "wb") as handle:
            pickle.dump(state, handle)
    assert not marker.exists()

    with pytest.raises(ValueError) as error:
        convert(folder, tmp_path / "preset")
    message = str(error.value)
    assert "pytorch_model.bin" in message
    assert "could run code" in message or "could not be read as plain tensors" in message
    assert not marker.exists(), "the pickle's payload ran"
    assert not (tmp_path / "preset").exists()


def test_the_refusal_names_what_the_pickle_asked_for(tmp_path):
    folder = huggingface_folder(tmp_path / "hostile")
    torch.save({"a": CreatesAFile(tmp_path / "marker")}, folder / "pytorch_model.bin")
    with pytest.raises(
        ValueError, match=r"Refusing to load .*could run code.*Unsupported global.*open"
    ):
        convert(folder, tmp_path / "preset")
    assert not (tmp_path / "marker").exists()


def test_an_hdf5_link_to_another_file_is_refused_unread(tmp_path, monkeypatch):
    """A preset whose model.weights.h5 links into another file (say, a secret of the user's)."""
    BertBackbone(**TINY).save_to_preset(tmp_path / "preset")
    secret = tmp_path / "secret.h5"
    with h5py.File(secret, "w") as handle:
        handle["data"] = np.arange(32, dtype="float32")
    weights_path = tmp_path / "preset" / "model.weights.h5"
    with h5py.File(weights_path, "a") as handle:
        del handle["backbone/pooler/dense/bias"]
        handle["backbone/pooler/dense/bias"] = h5py.ExternalLink(str(secret), "/data")

    def no_data_reads(self, *args, **kwargs):
        pytest.fail(f"dataset {self.name} was read")

    monkeypatch.setattr(h5py.Dataset, "__getitem__", no_data_reads)
    with pytest.raises(
        ValueError, match=r"`backbone/pooler/dense/bias` is an external link to '.*secret.h5'"
    ):
        BertBackbone.from_preset(tmp_path / "preset")
    # The link was never followed: with the target gone, following it would fail
    # differently (HDF5's "unable to open external file").
    secret.unlink()
    with pytest.raises(ValueError, match="is an external link"):
        read_weights(weights_path)


def test_a_keras_hub_weights_file_with_a_link_is_refused_before_keras_reads_it(
    tmp_path, monkeypatch
):
    folder = tmp_path / "keras_hub"
    folder.mkdir()
    config = {
        "module": "keras_hub.src.models.bert.bert_backbone",
        "class_name": "BertBackbone",
        "config": {
            "vocabulary_size": 10,
            "num_layers": 1,
            "num_heads": 2,
            "hidden_dim": 8,
            "intermediate_dim": 8,
        },
        "registered_name": "keras_hub>BertBackbone",
    }
    (folder / "config.json").write_text(json.dumps(config))
    with h5py.File(folder / "model.weights.h5", "w") as handle:
        handle["layers/dense/vars/0"] = h5py.ExternalLink("/etc/passwd", "/x")
    monkeypatch.setattr(h5py.Dataset, "__getitem__", lambda *a: pytest.fail("data was read"))
    with pytest.raises(ValueError, match="external link to '/etc/passwd'"):
        load_checkpoint(folder)


@pytest.mark.parametrize(
    "config_change, message",
    [
        # A Lambda (or any other class) where BertBackbone's arguments belong.
        (
            {
                "config": {
                    "vocabulary_size": {"class_name": "Lambda", "config": {"function": "..."}}
                }
            },
            "must be a plain int",
        ),
        (
            {"registered_name": "keras_hub>Lambda", "class_name": "Lambda"},
            "only keras-hub's BertBackbone",
        ),
        (
            {"config": {"vocabulary_size": 10, "activation": "exec"}},
            "unknown BertBackbone argument 'activation'",
        ),
        (
            {
                "config": {
                    "vocabulary_size": 10,
                    "dtype": {"module": "evil", "class_name": "Policy", "config": {}},
                }
            },
            "`dtype` must be a dtype name or a plain keras DTypePolicy",
        ),
    ],
)
def test_a_keras_hub_config_naming_code_is_refused_before_keras_sees_it(
    tmp_path, config_change, message
):
    folder = tmp_path / "keras_hub"
    folder.mkdir()
    config = {
        "module": "keras_hub.src.models.bert.bert_backbone",
        "class_name": "BertBackbone",
        "config": {},
        "registered_name": "keras_hub>BertBackbone",
        **config_change,
    }
    (folder / "config.json").write_text(json.dumps(config))
    with h5py.File(folder / "model.weights.h5", "w"):
        pass
    with pytest.raises(ValueError, match=message):
        convert(folder, tmp_path / "preset")


def write_safetensors(path, header, data=b""):
    raw = json.dumps(header).encode("utf-8")
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)


def test_a_safetensors_header_larger_than_the_file_is_refused_before_allocation(
    tmp_path, monkeypatch
):
    folder = huggingface_folder(tmp_path / "hostile")
    path = folder / "model.safetensors"
    path.write_bytes(struct.pack("<Q", 2**62) + b'{"a": 1}')

    import safetensors.numpy

    monkeypatch.setattr(
        safetensors.numpy, "load_file", lambda *a, **k: pytest.fail("safetensors read the file")
    )
    with pytest.raises(
        ValueError, match=r"header declares 4611686018427387904 bytes but the file has only 8"
    ):
        convert(folder, tmp_path / "preset")


@pytest.mark.parametrize(
    "header, data, message",
    [
        (
            {"a": {"dtype": "F32", "shape": [2**40], "data_offsets": [0, 2**42]}},
            b"",
            "ends at byte",
        ),
        ({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}, bytes(8), "needs 16 bytes"),
        (
            {"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}},
            bytes(4),
            "not a list of sizes",
        ),
        (
            {"a": {"dtype": "PYOBJ", "shape": [1], "data_offsets": [0, 4]}},
            bytes(4),
            "dtype 'PYOBJ'",
        ),
        (
            {
                "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]},
            },
            bytes(12),
            "overlap",
        ),
        (["not", "an", "object"], b"", "not an object"),
    ],
)
def test_safetensors_headers_are_validated(tmp_path, header, data, message):
    path = tmp_path / "model.safetensors"
    write_safetensors(path, header, data)
    with pytest.raises(ValueError, match=message):
        check_safetensors_header(path)


def test_a_valid_safetensors_header_passes(tmp_path):
    from safetensors.numpy import save_file

    save_file(
        {"a": np.ones((2, 3), "float32"), "b": np.zeros(4, "int64")}, tmp_path / "ok.safetensors"
    )
    header = check_safetensors_header(tmp_path / "ok.safetensors")
    assert header["a"]["shape"] == [2, 3] and header["b"]["dtype"] == "I64"
