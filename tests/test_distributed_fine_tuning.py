"""Multi-process fine-tuning: two JAX processes on 127.0.0.1, each with two virtual CPU
devices, fine-tune step for step like one process with four (JAX only).

The processes meet through `keras.distribution.initialize` (what `kbert finetune
--distributed` calls, as `kbert pretrain --distributed` does), share one output folder,
and only the first writes it. Every process runs under a timeout and the pair is killed
if one hangs, so the test ends by itself.
"""

import pathlib

import numpy as np
import pytest
from process_helpers import on_the_process_pass
from fine_tuning_data import make_tiny_preset
from process_helpers import free_port
from process_helpers import result_lines
from process_helpers import start_jax_worker

TOLERANCE = 1e-5
PROCESS_TIMEOUT = 420  # seconds; a start, two compilations and 8 tiny steps take ~40 s

# One worker: the device count must be set before JAX starts, hence a fresh interpreter.
_WORKER = """
import json, sys
sys.path.insert(0, {tests!r})
import jax
jax.config.update("jax_cpu_collectives_implementation", "gloo")
from kbert.training.distribution import initialize_distributed
distributed = initialize_distributed({distributed!r})
from fine_tuning_data import classification_examples
from kbert.finetuning import FineTuner, FineTuningConfig

assert jax.device_count() == 4 and jax.process_count() == (2 if distributed else 1)
losses = []

class StepLosses:
    def on_step(self, step, logs):
        losses.append(float(logs["loss"]))

# 13 examples in batches of 8: the second batch of each epoch (5 rows) is filled to 8.
config = FineTuningConfig(epochs=2, batch_size=8, learning_rate=1e-3, seed=3,
                          checkpoint_every=1, eval_batch_size=5, data_parallel=True)
tuner = FineTuner("classification", {preset!r}, {output!r}, config, [StepLosses()])
result = tuner.run(classification_examples(13, 0), classification_examples(7, 1))
kernel = tuner.model.trainable_weights[0].value
assert len(kernel.sharding.device_set) == 4, kernel.sharding
print("RESULT" + json.dumps({{
    "losses": losses,
    "history": result.history,
    "devices": result.devices,
    "processes": result.processes,
    "process": jax.process_index(),
    "weights": [float(abs(v).sum()) for v in
                (jax.numpy.asarray(w.value) for w in tuner.model.weights)],
}}))
"""


def _start(preset, output, devices, distributed, process_id=None, port=None):
    script = _WORKER.format(
        tests=str(pathlib.Path(__file__).parent),
        distributed=distributed,
        preset=str(preset),
        output=str(output),
    )
    return start_jax_worker(script, devices, process_id, port if distributed else None)


@pytest.mark.slow
@on_the_process_pass("starts JAX processes of its own (multi-process training is JAX's)")
def test_two_processes_fine_tune_step_for_step_like_one_with_as_many_devices(tmp_path):
    preset = make_tiny_preset(tmp_path / "preset")
    port = free_port()
    shared = tmp_path / "shared"
    pair = [_start(preset, shared, 2, True, index, port) for index in range(2)]
    first, second = result_lines(pair, PROCESS_TIMEOUT)
    (alone,) = result_lines([_start(preset, tmp_path / "alone", 4, False)], PROCESS_TIMEOUT)

    assert {first["process"], second["process"]} == {0, 1}
    for run in (first, second, alone):
        assert run["devices"] == 4 and len(run["losses"]) == 4  # 2 epochs of 2 batches
    assert first["processes"] == second["processes"] == 2 and alone["processes"] == 1
    # Both processes hold the same replicated model and evaluate alike...
    assert first["losses"] == second["losses"] and first["history"] == second["history"]
    np.testing.assert_allclose(first["weights"], second["weights"], rtol=0, atol=0)
    # ...which follows the single process, step by step.
    differences = np.abs(np.asarray(first["losses"]) - np.asarray(alone["losses"]))
    print("largest per-step loss difference:", differences.max())
    assert differences.max() < TOLERANCE, (first["losses"], alone["losses"])
    np.testing.assert_allclose(first["weights"], alone["weights"], rtol=TOLERANCE)
    for together, single in zip(first["history"], alone["history"]):
        for key, value in single.items():
            assert abs(together[key] - value) < TOLERANCE, (key, first["history"], alone["history"])
    # One model and one checkpoint in the shared folder, written by the first process.
    assert sorted(path.name for path in shared.iterdir()) == ["model", "training_checkpoint.h5"]
