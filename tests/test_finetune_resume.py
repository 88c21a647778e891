"""FineTuner: resuming after an interruption, cancellation, early stopping, callbacks, errors.

Runs on every backend. The model is tiny and every batch has the same shape, so each
run compiles one training step.
"""

import json
import random

import keras
import numpy as np
import pytest
from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset

from kbert.training.cancellation_token import CancellationToken
from kbert.finetuning import ClassificationRecipe
from kbert.finetuning import FineTuner
from kbert.finetuning import FineTuningConfig
from kbert.training.training_checkpoint import TrainingCheckpoint
from kbert.finetuning import training_data_fingerprint

# Dropout stays on: resuming must restore its random state too.
SMALL_MODEL = dict(
    hidden_size=32, num_layers=1, num_heads=2, intermediate_size=48, max_positions=16
)
# 24 examples in batches of 4: 6 steps per epoch, 12 in all; one update every 2 batches.
CONFIG = FineTuningConfig(
    epochs=2,
    batch_size=4,
    learning_rate=1e-3,
    gradient_accumulation_steps=2,
    checkpoint_every=2,
    seed=5,
    max_length=16,
)
TOTAL_STEPS = 12


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    return make_tiny_preset(tmp_path_factory.mktemp("resume") / "preset", **SMALL_MODEL)


@pytest.fixture(scope="module")
def train_examples():
    return classification_examples(24, seed=11)


class Recorder:
    """Records the callback protocol; optionally cancels or crashes at a step."""

    def __init__(self, cancel_at=None, token=None, crash_at=None):
        self.cancel_at, self.token, self.crash_at = cancel_at, token, crash_at
        self.events = []

    def on_train_begin(self, total_steps):
        self.events.append(("begin", total_steps))

    def on_step(self, step, logs):
        self.events.append(("step", step, logs["epoch"]))
        if step == self.cancel_at:
            self.token.cancel()
        if step == self.crash_at:
            raise RuntimeError(f"simulated crash at step {step}")

    def on_epoch_end(self, epoch, logs):
        self.events.append(("epoch", epoch, sorted(logs)))

    def on_train_end(self, result):
        self.events.append(("end", result.status))


def _weights(model):
    return [keras.ops.convert_to_numpy(variable) for variable in model.trainable_variables]


def _run(preset, output, examples, resume=False, callback=None, token=None, config=CONFIG):
    tuner = FineTuner(
        ClassificationRecipe(),
        preset,
        output,
        config,
        callbacks=[callback] if callback else [],
        cancellation=token,
    )
    return tuner, tuner.run(examples, resume=resume)


def test_interrupted_and_resumed_training_reaches_the_same_weights(
    preset, train_examples, tmp_path
):
    recorder = Recorder()
    reference, result = _run(preset, tmp_path / "straight", train_examples, callback=recorder)
    assert result.status == "completed" and result.global_step == TOTAL_STEPS
    assert recorder.events[0] == ("begin", TOTAL_STEPS)
    assert [event[1] for event in recorder.events if event[0] == "step"] == list(range(1, 13))
    assert ("epoch", 2, ["epoch", "learning_rate", "loss"]) in recorder.events
    assert recorder.events[-1] == ("end", "completed")

    # Cancel at a random step, crash later at another, then finish.
    rng = random.Random()
    cancel_at = rng.randint(1, TOTAL_STEPS - 2)
    crash_at = rng.randint(cancel_at + 1, TOTAL_STEPS - 1)
    where = f"cancelled at step {cancel_at}, crashed at step {crash_at}"
    output = tmp_path / "interrupted"
    token = CancellationToken()
    recorder = Recorder(cancel_at, token)
    _, cancelled = _run(preset, output, train_examples, callback=recorder, token=token)
    # The token is checked after every batch: the run stops right after the cancelling one.
    assert cancelled.cancelled and cancelled.global_step == cancel_at, where
    assert recorder.events[-1] == ("end", "cancelled")
    assert cancelled.checkpoint_path.is_file()
    assert (cancelled.preset_path is None) == (cancel_at <= 6), where
    # Its state names the data it was trained on, as callers can compute it.
    state = TrainingCheckpoint(cancelled.checkpoint_path).read_state()
    assert state["training_data"] == training_data_fingerprint(train_examples)
    assert state["training_data"] != training_data_fingerprint(train_examples[:20])

    # A resumed run must use the same settings and data; a new run needs an empty folder.
    with pytest.raises(ValueError, match=r"config.learning_rate: 0.001 then, 0.002 now"):
        _run(preset, output, train_examples, resume=True, config=CONFIG.replace(learning_rate=2e-3))
    with pytest.raises(ValueError, match=r"training_data: '24 examples, .* then, '20 examples"):
        _run(preset, output, train_examples[:20], resume=True)
    with pytest.raises(ValueError, match="not empty"):
        _run(preset, output, train_examples)

    with pytest.raises(RuntimeError, match="simulated crash"):
        _run(preset, output, train_examples, resume=True, callback=Recorder(crash_at=crash_at))
    resumed, result = _run(preset, output, train_examples, resume=True)
    assert result.status == "completed" and result.global_step == TOTAL_STEPS, where

    difference = max(
        float(np.max(np.abs(a - b)))
        for a, b in zip(_weights(reference.model), _weights(resumed.model))
    )
    print(f"{keras.backend.backend()}: {where}; max weight difference {difference:.3g}")
    assert difference <= 1e-6, where
    assert [entry["epoch"] for entry in result.history] == [1, 2]


class ScriptedScores(ClassificationRecipe):
    """Classification whose evaluation returns scripted accuracies, one per epoch."""

    def __init__(self, scores):
        super().__init__()
        self.scores = list(scores)

    def evaluate(self, model, examples, max_length=None, batch_size=32):
        return {"accuracy": self.scores.pop(0)}


def test_early_stopping_keeps_the_best_epoch(preset, train_examples, tmp_path):
    task = ScriptedScores([0.5, 0.7, 0.6, 0.65, 0.9])
    config = CONFIG.replace(
        epochs=5, patience=2, gradient_accumulation_steps=1, checkpoint_every=None
    )
    tuner = FineTuner(task, preset, tmp_path / "run", config)
    result = tuner.run(train_examples[:8], train_examples[8:12])
    assert result.status == "stopped_early"
    assert (result.best_metric, result.best_epoch, result.metric) == (0.7, 2, "accuracy")
    assert [entry["accuracy"] for entry in result.history] == [0.5, 0.7, 0.6, 0.65]
    metadata = json.loads((result.preset_path / "metadata.json").read_text())
    assert metadata["fine_tuning"]["epoch"] == 2
    # Resuming a run that stopped early does not train further.
    again = FineTuner(ScriptedScores([]), preset, tmp_path / "run", config)
    assert (
        again.run(train_examples[:8], train_examples[8:12], resume=True).status == "stopped_early"
    )


def test_an_evaluation_label_unseen_in_training_is_named(preset, train_examples, tmp_path):
    evaluation = classification_examples(4, seed=3)
    evaluation[2] = type(evaluation[2])("a cat", None, "neutral", 17)
    with pytest.raises(
        ValueError, match=r"line 17: label 'neutral' does not occur in the training"
    ):
        FineTuner("classification", preset, tmp_path / "run", CONFIG).run(
            train_examples, evaluation
        )


def test_bad_settings_are_refused(preset, train_examples, tmp_path):
    with pytest.raises(ValueError, match="patience"):
        FineTuner("classification", preset, tmp_path / "a", CONFIG.replace(patience=1)).run(
            train_examples
        )
    with pytest.raises(ValueError, match="precision"):
        FineTuningConfig(precision="float16")
    with pytest.raises(ValueError, match="task"):
        FineTuner(42, preset, tmp_path / "b")
