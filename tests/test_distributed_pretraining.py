"""Multi-process pretraining: two JAX processes on 127.0.0.1, each with two virtual CPU
devices, train step for step like one process with four (JAX only).

The processes meet through `keras.distribution.initialize` (what `kbert pretrain
--distributed` calls) with the coordinator address and process ids in the standard
`KERAS_DISTRIBUTION_*` variables; gradients cross processes through JAX's CPU
collectives (gloo). Every process runs under a timeout and the pair is killed if one
hangs, so the test ends by itself.
"""

import pathlib

import numpy as np
import pytest
from process_helpers import on_the_process_pass
from pretraining_helpers import make_shards
from process_helpers import free_port
from process_helpers import result_lines
from process_helpers import start_jax_worker

STEPS = 20
TOLERANCE = 1e-5
PROCESS_TIMEOUT = 420  # seconds; a start, one compilation and 20 tiny steps take ~30 s

# One worker: the device count must be set before JAX starts, hence a fresh interpreter.
_WORKER = """
import json, sys
sys.path.insert(0, {tests!r})
import jax
jax.config.update("jax_cpu_collectives_implementation", "gloo")
from kbert.training.distribution import initialize_distributed
distributed = initialize_distributed({distributed!r})
from pretraining_helpers import StepLosses, tiny_config
from kbert.architecture.bert_config import BertConfig
from kbert.pretraining.pretraining_config import PretrainingConfig
from kbert.pretraining.pretraining_loop import PretrainingLoop
from kbert.tokenizer import BertTokenizer

assert jax.device_count() == 4 and jax.process_count() == (2 if distributed else 1)
tokenizer = BertTokenizer.from_vocabulary_file({vocabulary!r})
config = PretrainingConfig(batch_size=8, steps={steps}, learning_rate=1e-2, warmup_steps=2,
                           checkpoint_every=None, data_parallel=True, seed=3)
recorder = StepLosses("loss")
loop = PretrainingLoop({output!r}, config, callbacks=[recorder])
# Dropout on: rows fed twice (a process feeding the whole batch, not its share) would
# draw other masks than the same rows fed once, and the runs would part.
backbone = BertConfig(**dict(tiny_config(tokenizer).to_dict(), hidden_dropout=0.1,
                             attention_dropout=0.1))
result = loop.run({data!r}, backbone_config=backbone, tokenizer=tokenizer)
kernel = loop.model.pretrainer.weights[0].value
assert len(kernel.sharding.device_set) == 4, kernel.sharding
print("RESULT" + json.dumps({{
    "losses": recorder.losses,
    "global_step": result.global_step,
    "process": jax.process_index(),
    "weights": [float(abs(v).sum()) for v in
                (jax.numpy.asarray(w.value) for w in loop.model.pretrainer.weights)],
}}))
"""


def _start(tmp_path, name, devices, distributed, data, vocabulary, process_id=None, port=None):
    script = _WORKER.format(
        tests=str(pathlib.Path(__file__).parent),
        distributed=distributed,
        vocabulary=str(vocabulary),
        steps=STEPS,
        output=str(tmp_path / name),
        data=str(data),
    )
    return start_jax_worker(script, devices, process_id, port if distributed else None)


@pytest.mark.slow
@on_the_process_pass("starts JAX processes of its own (multi-process training is JAX's)")
def test_two_processes_train_step_for_step_like_one_with_as_many_devices(tmp_path):
    vocabulary_folder = tmp_path / "corpus"
    data, _ = make_shards(vocabulary_folder)
    vocabulary = vocabulary_folder / "vocab.txt"
    port = free_port()
    pair = [
        _start(tmp_path, f"process-{index}", 2, True, data, vocabulary, index, port)
        for index in range(2)
    ]
    first, second = result_lines(pair, PROCESS_TIMEOUT)
    alone_process = _start(tmp_path, "alone", 4, False, data, vocabulary)
    (alone,) = result_lines([alone_process], PROCESS_TIMEOUT)

    assert {first["process"], second["process"]} == {0, 1}
    for run in (first, second, alone):
        assert run["global_step"] == STEPS and len(run["losses"]) == STEPS
    # Both processes hold the same replicated model...
    assert first["losses"] == second["losses"]
    np.testing.assert_allclose(first["weights"], second["weights"], rtol=0, atol=0)
    # ...and it follows the single process, step by step.
    differences = np.abs(np.asarray(first["losses"]) - np.asarray(alone["losses"]))
    print("largest per-step loss difference:", differences.max())
    assert differences.max() < TOLERANCE, (first["losses"], alone["losses"])
    np.testing.assert_allclose(first["weights"], alone["weights"], rtol=TOLERANCE)
    # The loss did move: the steps trained something.
    assert alone["losses"][-1] < alone["losses"][0]
