"""A resumed fine-tuning run reports what an uninterrupted one does, wherever it stopped.

The run is interrupted at 10 of its 11 inner steps, one after the other (each resume is
interrupted again at the next point), by cancellation or by a crash that loses the steps
since the last checkpoint; one point is the end of the first epoch. History, the saved
model's metadata and `kbert finetune --json` must equal the uninterrupted run's.
"""

import json
import random

import keras
import pytest
from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset
from test_finetune_resume import CONFIG
from test_finetune_resume import SMALL_MODEL
from test_finetune_resume import TOTAL_STEPS

from kbert.cli import main
from kbert.training.cancellation_token import CancellationToken
from kbert.finetuning import ClassificationRecipe
from kbert.finetuning import FineTuner
from kbert.training import step_callback

# The reports are bookkeeping over FineTuner's resume, which test_finetune_resume checks
# on every backend; TensorFlow's pass, the longest, leaves these long runs to the others.
pytestmark = pytest.mark.skipif(
    keras.config.backend() == "tensorflow",
    reason="bookkeeping over FineTuner's resume (tested on every backend in "
    "test_finetune_resume): the JAX and PyTorch passes run it",
)

STEPS_PER_EPOCH = TOTAL_STEPS // CONFIG.epochs


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    return make_tiny_preset(tmp_path_factory.mktemp("reports") / "preset", **SMALL_MODEL)


@pytest.fixture(scope="module")
def data():
    return classification_examples(24, seed=11), classification_examples(8, seed=4)


class Interrupt:
    """Cancels (checkpoint written at once) or crashes (progress since the last
    checkpoint lost) at one global step, or crashes right after an epoch ends."""

    def __init__(self, step, how, token):
        self.step, self.how, self.token = step, how, token

    def on_step(self, step, logs):
        if step != self.step:
            return
        if self.how == "cancel":
            self.token.cancel()
        elif self.how == "crash":
            raise RuntimeError(f"killed at step {step}")

    def on_epoch_end(self, epoch, logs):
        if self.how == "crash after epoch" and epoch * STEPS_PER_EPOCH == self.step:
            raise RuntimeError(f"killed after epoch {epoch}")


def _run(preset, output, train, evaluation, resume=False, callbacks=(), token=None):
    tuner = FineTuner(ClassificationRecipe(), preset, output, CONFIG, list(callbacks), token)
    return tuner.run(train, evaluation, resume=resume)


def _report(result, output):
    """The result as `--json` prints it, with the output folder named neutrally."""
    text = json.dumps(result.to_dict()).replace(str(output), "OUTPUT")
    return json.loads(text)


def _metadata(output):
    metadata = json.loads((output / "model" / "metadata.json").read_text())
    metadata.pop("created")
    return metadata


def _interruptions(seed):
    """10 distinct steps in 1..11 with how to stop at each; the end of epoch 1 included."""
    rng = random.Random(seed)
    steps = sorted(rng.sample([s for s in range(1, TOTAL_STEPS) if s != STEPS_PER_EPOCH], 9))
    plan = [(step, rng.choice(["cancel", "crash"])) for step in steps]
    plan.append((STEPS_PER_EPOCH, rng.choice(["cancel", "crash after epoch"])))
    return sorted(plan)


@pytest.mark.slow
def test_reports_after_ten_interruptions_equal_the_uninterrupted_run(preset, data, tmp_path):
    train, evaluation = data
    straight = _run(preset, tmp_path / "straight", train, evaluation)
    assert straight.status == "completed"

    seed = random.randrange(1 << 30)
    plan = _interruptions(seed)
    output = tmp_path / "interrupted"
    for step, how in plan:
        token = CancellationToken()
        where = f"seed {seed}: {how} at step {step} (plan {plan})"
        try:
            result = _run(
                preset, output, train, evaluation, resume=True,
                callbacks=[Interrupt(step, how, token)], token=token,
            )
        except RuntimeError:
            continue
        # A cancelled run stops at the step; a later point may already be passed when
        # a crash lost progress, then the run completes its plan step anyway.
        assert result.status in ("cancelled", "completed"), where
    resumed = _run(preset, output, train, evaluation, resume=True)
    assert resumed.status == "completed", plan

    assert _report(resumed, output) == _report(straight, tmp_path / "straight"), plan
    assert [entry["loss"] for entry in resumed.history] == [
        entry["loss"] for entry in straight.history
    ]
    assert _metadata(output) == _metadata(tmp_path / "straight"), plan


def _write_csv(path, examples):
    rows = ["text,label"] + [f'"{example.text}",{example.label}' for example in examples]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _finetune(preset, train, evaluation, output, *extra):
    return main(
        [
            "finetune", "--task", "classification", "--model", str(preset),
            "--train", str(train), "--eval", str(evaluation), "--output", str(output),
            "--epochs", "2", "--batch-size", "4", "--learning-rate", "1e-3",
            "--gradient-accumulation", "2", "--checkpoint-every", "2", "--seed", "5",
            "--max-length", "16", "--json", *extra,
        ]
    )


def test_finetune_json_after_a_crash_and_resume_equals_the_uninterrupted_run(
    preset, data, tmp_path, capsys, monkeypatch
):
    train = _write_csv(tmp_path / "train.csv", data[0])
    evaluation = _write_csv(tmp_path / "eval.csv", data[1])
    assert _finetune(preset, train, evaluation, tmp_path / "straight") == 0
    straight = json.loads(capsys.readouterr().out.strip().splitlines()[-1])

    original = step_callback.StepCallback.on_train_batch_end

    def killed_at_step_9(self, batch, logs=None):
        original(self, batch, logs)
        if self.state["global_step"] == 9:
            raise RuntimeError("killed at step 9")

    monkeypatch.setattr(step_callback.StepCallback, "on_train_batch_end", killed_at_step_9)
    with pytest.raises(RuntimeError, match="killed at step 9"):
        _finetune(preset, train, evaluation, tmp_path / "resumed")
    monkeypatch.undo()
    capsys.readouterr()
    assert _finetune(preset, train, evaluation, tmp_path / "resumed", "--resume") == 0
    resumed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    normalized = json.loads(
        json.dumps(resumed).replace(str(tmp_path / "resumed"), str(tmp_path / "straight"))
    )
    assert normalized == straight
