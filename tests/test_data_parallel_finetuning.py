"""Fine-tuning over several devices: the same run as on one (JAX, two virtual CPU devices).

Each task is fine-tuned twice from the same tiny preset, with the same seed and batches:
on one device, and with `data_parallel=True` over two. 13 training examples in batches
of 4 leave one batch of 1 per epoch, which two devices cannot split: it is filled up with
rows that weigh nothing, so the evaluation scores, the logged training loss (Keras'
running mean weighs a batch by its rows: the fillers' share is taken back out) and the
final weights must agree.
"""

import json
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest
from process_helpers import on_the_process_pass
from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset

from kbert.finetuning.fine_tuning_config import FineTuningConfig
from kbert.preprocessing.bucketed_dataset import BucketedDataset

TOLERANCE = 1e-5

# A fresh interpreter: the devices must be set up before the backend starts (`{devices}`).
_COMPARISON = """
import json, sys
sys.path.insert(0, {tests!r})
{devices}
import numpy as np
from fine_tuning_data import (classification_examples, make_tiny_preset, qa_examples,
                              token_classification_examples)
from kbert.finetuning import FineTuner
from kbert.finetuning.fine_tuning_config import FineTuningConfig
from kbert.models import BertTask

folder = {folder!r}
preset = make_tiny_preset(folder + "/preset", **{preset_options!r})
data = {{
    "classification": (classification_examples(13, 0), classification_examples(7, 1)),
    "token-classification": (token_classification_examples(13, 0),
                             token_classification_examples(7, 1)),
    "qa": (qa_examples(13, 0, 2, 4), qa_examples(7, 1, 2, 4)),
}}
report = {{}}
for task, (train, evaluation) in data.items():
    runs = {{}}
    for parallel in (False, True):
        config = FineTuningConfig(epochs=2, batch_size=4, learning_rate=1e-3, seed=3,
                                  checkpoint_every=None, eval_batch_size=5,
                                  data_parallel=parallel, **{config_options!r})
        tuner = FineTuner(task, preset, folder + f"/{{task}}-{{parallel}}", config)
        result = tuner.run(train, evaluation)
        if parallel:
            check_spread(tuner.model)
        model = BertTask.from_preset(result.preset_path)
        runs[parallel] = dict(
            devices=result.devices,
            history=result.history,
            weights=[np.asarray(w) for w in model.get_weights()],
        )
    report[task] = dict(
        devices=[runs[False]["devices"], runs[True]["devices"]],
        history=[runs[False]["history"], runs[True]["history"]],
        weight_difference=max(
            float(np.abs(a - b).max()) for a, b in zip(runs[False]["weights"], runs[True]["weights"])
        ),
    )
print("REPORT" + json.dumps(report))
"""

# JAX: two virtual CPU devices (XLA_FLAGS, set by the test).
_JAX_DEVICES = """
import jax
assert jax.device_count() == 2, jax.devices()

def check_spread(model):
    sharding = model.trainable_weights[0].value.sharding
    assert len(sharding.device_set) == 2, sharding
"""
# TensorFlow: the CPU split into two logical devices before anything runs, so that the
# run mirrors over them (tf.distribute.MirroredStrategy, as over two GPUs).
_TENSORFLOW_DEVICES = """
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

def check_spread(model):
    mirrored = model.trainable_weights[0].value  # a MirroredVariable: one copy per device
    assert len(mirrored.values) == 2, mirrored
"""


def _comparison(folder, devices, preset_options=None, config_options=None):
    return _COMPARISON.format(
        tests=str(pathlib.Path(__file__).parent),
        devices=devices,
        folder=str(folder),
        preset_options=preset_options or {},
        config_options=config_options or {},
    )


def _check_report(report):
    """Every task ran on one device and on two, to the same weights, scores and losses."""
    assert set(report) == {"classification", "token-classification", "qa"}
    print("largest weight difference:", {task: e["weight_difference"] for task, e in report.items()})
    for task, entry in report.items():
        assert entry["devices"] == [1, 2], task
        assert entry["weight_difference"] < TOLERANCE, (task, entry["weight_difference"])
        one, two = entry["history"]
        assert len(one) == len(two) == 2, task
        for one_epoch, two_epoch in zip(one, two):
            assert one_epoch.keys() == two_epoch.keys(), task
            for key, value in one_epoch.items():
                # The training loss too: the fillers weigh nothing in what is logged.
                assert abs(value - two_epoch[key]) < TOLERANCE, (task, key, one, two)


def _run_report(script, environment):
    """The JSON a comparison script prints after "REPORT", run in a fresh interpreter."""
    completed = subprocess.run(
        [sys.executable, "-c", script],
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    line = next(line for line in completed.stdout.splitlines() if line.startswith("REPORT"))
    return json.loads(line[len("REPORT") :])


@pytest.mark.slow
@on_the_process_pass(
    "starts a JAX process of its own with two devices (keras.distribution's data "
    "parallelism is JAX's; test_the_flag_runs_on_every_backend covers TensorFlow's "
    "strategy and PyTorch's one device)"
)
def test_two_devices_fine_tune_as_one(tmp_path):
    environment = dict(
        os.environ,
        KERAS_BACKEND="jax",
        XLA_FLAGS=os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2",
        JAX_PLATFORMS="cpu",
    )
    _check_report(_run_report(_comparison(tmp_path, _JAX_DEVICES), environment))


def test_the_flag_runs_on_every_backend(tmp_path, capsys):
    # JAX on this process's devices, TensorFlow's strategy, PyTorch's one device.
    from kbert.cli import main

    preset = make_tiny_preset(tmp_path / "preset")
    train = tmp_path / "train.csv"
    rows = ["text,label"] + [f"{e.text},{e.label}" for e in classification_examples(10, 0)]
    train.write_text("\n".join(rows) + "\n", encoding="utf-8")
    output = tmp_path / "run"
    arguments = ["finetune", "--task", "classification", "--model", str(preset)]
    arguments += ["--train", str(train), "--output", str(output), "--epochs", "1"]
    arguments += ["--batch-size", "4", "--data-parallel", "--json"]
    assert main(arguments) == 0
    assert (output / "model" / "config.json").is_file()
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    if keras.backend.backend() == "jax":
        assert printed["devices"] == len(keras.distribution.list_devices())
    else:  # TensorFlow's GPUs or logical CPUs (one here), PyTorch's one device
        assert printed["devices"] == 1
    assert printed["processes"] == 1  # one process: no --distributed


def test_the_result_line_names_the_processes_beside_the_devices(capsys):
    from kbert.commands.finetune import _print_result
    from kbert.finetuning.fine_tuning_result import FineTuningResult

    def devices_line(**counts):
        result = FineTuningResult("completed", None, None, 1, {}, "model", "checkpoint", **counts)
        _print_result(result)
        lines = capsys.readouterr().out.splitlines()
        return next((line for line in lines if line.startswith("devices")), None), result

    line, result = devices_line(devices=4, processes=2)
    assert line == "devices: 4 in 2 processes (data parallel)"
    assert result.to_dict()["devices"] == 4 and result.to_dict()["processes"] == 2
    assert devices_line(devices=2)[0] == "devices: 2 (data parallel)"
    assert devices_line()[0] is None and devices_line()[1].to_dict()["processes"] == 1


def test_a_batch_the_devices_do_not_divide_is_filled_with_rows_that_weigh_nothing(monkeypatch):
    import kbert.preprocessing.bucketed_dataset as bucketed

    token_ids = [np.arange(2, 2 + n) for n in (3, 4, 5, 6, 7)]
    per_token = [np.arange(n) for n in (3, 4, 5, 6, 7)]
    dataset = BucketedDataset(
        token_ids,
        labels={"label": np.array([0, 1, 0, 1, 0]), "tags": per_token},
        batch_size=3,
        shuffle=False,
    )
    monkeypatch.setattr(bucketed, "data_parallel_replicas", lambda: 4)
    inputs, labels, weights = dataset[1]  # 2 real rows, filled up to 4
    assert inputs["token_ids"].shape[0] == labels["label"].shape[0] == 4
    np.testing.assert_array_equal(inputs["token_ids"][2], inputs["token_ids"][0])
    # The per-example label is averaged over the batch: real rows weigh 4 / 2.
    np.testing.assert_array_equal(weights["label"], [2.0, 2.0, 0.0, 0.0])
    # Per-token labels: each labelled token weighs (B * L) / labelled tokens of the global
    # batch (TokenCrossEntropy sums over the slots); the rest and the fillers nothing.
    length = inputs["token_ids"].shape[1]
    real = [len(per_token[example]) for example in dataset.example_indices(1)]
    expected = np.zeros((4, length), np.float32)
    for row, count in enumerate(real):
        expected[row, :count] = 4 * length / sum(real)
    np.testing.assert_allclose(weights["tags"], expected, rtol=1e-6)
    assert (labels["tags"][2:] == -100).all()
    for row, example in enumerate(dataset.example_indices(1)):
        np.testing.assert_array_equal(labels["tags"][row, : len(per_token[example])], per_token[example])
    # A batch the devices divide keeps its rows and their weights.
    monkeypatch.setattr(bucketed, "data_parallel_replicas", lambda: 3)
    inputs, labels, weights = dataset[0]
    assert inputs["token_ids"].shape[0] == 3
    np.testing.assert_array_equal(weights["label"], [1.0, 1.0, 1.0])
    # One device: the batches are those of a dataset without weights.
    monkeypatch.setattr(bucketed, "data_parallel_replicas", lambda: 1)
    assert len(dataset[1]) == 2 and dataset[1][0]["token_ids"].shape[0] == 2


def test_config_records_the_choice():
    assert FineTuningConfig().data_parallel is False
    assert FineTuningConfig(data_parallel=True).to_dict()["data_parallel"] is True


@pytest.mark.slow
@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="tf.distribute is TensorFlow's"
)
def test_tensorflow_mirrors_over_two_logical_devices_as_one(tmp_path):
    # 13 examples in batches of 4: the last batch of 1 is filled up for the two replicas
    # (the count taken where the strategy is, not on tf.data's threads). Token
    # classification's loss is averaged over the global batch's tokens, not each
    # replica's; evaluation batches split evenly (QA's, one question at a time, too).
    # Dropout off: each replica draws its own masks, so only then is one device the
    # reference. Clipping off: Keras clips each replica's part of the gradient before
    # the parts are summed (a QA head's first steps clip; 1.5e-3 from one device).
    script = _comparison(
        tmp_path,
        _TENSORFLOW_DEVICES,
        preset_options=dict(hidden_dropout=0.0, attention_dropout=0.0),
        config_options=dict(clip_norm=None),
    )
    _check_report(_run_report(script, dict(os.environ, KERAS_BACKEND="tensorflow")))
