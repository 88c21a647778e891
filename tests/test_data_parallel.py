"""Data parallelism: the same loss curve on 2 virtual CPU devices as on one (JAX)."""

import json
import os
import pathlib
import subprocess
import sys

import keras
import pytest
from process_helpers import on_the_process_pass
from pretraining_helpers import make_shards, pretrain

from kbert.architecture.bert_config import BertConfig
from kbert.training.distribution import layout_map_for
from kbert.pretraining.pretraining_config import PretrainingConfig

STEPS = 5
TOLERANCE = 1e-4

# Run in a fresh interpreter: the device count must be set before JAX is imported.
_COMPARISON = """
import json, sys
sys.path.insert(0, {tests!r})
import jax
from pretraining_helpers import make_shards, pretrain
from kbert.pretraining.pretraining_config import PretrainingConfig

assert jax.device_count() == 2, jax.devices()
data, tokenizer = make_shards({folder!r} + "/corpus")
curves = {{}}
for parallel in (False, True):
    config = PretrainingConfig(batch_size=8, steps={steps}, learning_rate=1e-2, warmup_steps=1,
                               checkpoint_every=None, data_parallel=parallel, seed=3)
    _, recorder, loop = pretrain(data, tokenizer, {folder!r} + f"/run-{{parallel}}", config,
                              loss_name="loss")
    curves[str(parallel)] = recorder.losses
    if parallel:
        # The parallel run really is spread over both devices.
        weights = loop.model.pretrainer.weights[0].value
        assert len(weights.sharding.device_set) == 2, weights.sharding
print("CURVES" + json.dumps(curves))
"""


@on_the_process_pass(
    "starts a JAX process of its own with two devices (keras.distribution data "
    "parallelism is JAX's; test_data_parallel_flag_runs covers TensorFlow's "
    "MirroredStrategy and PyTorch's single device)"
)
def test_two_devices_follow_the_one_device_loss_curve(tmp_path):
    tests = str(pathlib.Path(__file__).parent)
    script = _COMPARISON.format(tests=tests, folder=str(tmp_path), steps=STEPS)
    environment = dict(
        os.environ,
        KERAS_BACKEND="jax",
        XLA_FLAGS=(
            os.environ.get("XLA_FLAGS", "")
            + " --xla_force_host_platform_device_count=2"
        ),
        JAX_PLATFORMS="cpu",
    )
    completed = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    line = next(
        line for line in completed.stdout.splitlines() if line.startswith("CURVES")
    )
    curves = json.loads(line[len("CURVES") :])
    one_device, two_devices = curves["False"], curves["True"]
    assert len(one_device) == len(two_devices) == STEPS
    differences = [abs(a - b) for a, b in zip(one_device, two_devices)]
    print("per-step loss differences:", differences)
    assert max(differences) < TOLERANCE, (one_device, two_devices)


def test_data_parallel_flag_runs(tmp_path):
    # JAX on this machine's devices, TensorFlow's MirroredStrategy, PyTorch's one device.
    data, tokenizer = make_shards(tmp_path / "corpus")
    config = PretrainingConfig(
        batch_size=8, steps=2, warmup_steps=0, checkpoint_every=None, data_parallel=True
    )
    result, recorder, _ = pretrain(data, tokenizer, tmp_path / "run", config)
    assert result.status == "completed" and len(recorder.losses) == 2


@pytest.mark.skipif(
    keras.backend.backend() != "jax",
    reason="keras.distribution meshes exist on JAX only",
)
def test_layout_map_shards_the_transformer_kernels_along_the_model_axis():
    config = BertConfig.from_size("tiny", vocabulary_size=1000)
    devices = keras.distribution.list_devices()[:1]
    mesh = keras.distribution.DeviceMesh((1, 1), ["batch", "model"], devices)
    layout_map = layout_map_for(config, mesh)
    path = "transformer_layer_0/self_attention/query_key_value/kernel"
    assert tuple(layout_map[path].axes) == (None, "model")
    assert tuple(layout_map["transformer_layer_1/output_dense/kernel"].axes) == (
        "model",
        None,
    )
    assert layout_map["embeddings/layer_norm/gamma"] is None
    with pytest.raises(ValueError, match="axes"):
        layout_map_for(config, keras.distribution.DeviceMesh((1,), ["data"], devices))
