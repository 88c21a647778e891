"""Multiple choice in `FineTuner`: a cancelled run resumes to the weights of a straight one."""

import keras
import numpy as np
from fine_tuning_data import make_tiny_preset
from fine_tuning_data import multiple_choice_examples

from kbert.finetuning import FineTuner
from kbert.finetuning import FineTuningConfig
from kbert.finetuning import make_recipe
from kbert.training.cancellation_token import CancellationToken

SMALL_MODEL = dict(
    hidden_size=32, num_layers=1, num_heads=2, intermediate_size=48, max_positions=32
)
# 24 examples of 4 endings in batches of 4: 6 steps an epoch, 12 in all.
CONFIG = FineTuningConfig(
    epochs=2, batch_size=4, learning_rate=1e-3, checkpoint_every=2, seed=5, max_length=32
)
CANCEL_AT = 7


class CancelAt:
    def __init__(self, step, token):
        self.step, self.token = step, token

    def on_step(self, step, logs):
        if step == self.step:
            self.token.cancel()


def _run(preset, output, examples, resume=False, token=None, callbacks=()):
    tuner = FineTuner(
        make_recipe("multiple-choice"), preset, output, CONFIG, callbacks=list(callbacks),
        cancellation=token,
    )
    return tuner, tuner.run(examples, examples[:8], resume=resume)


def test_a_cancelled_run_resumes_to_the_weights_of_a_straight_one(tmp_path):
    preset = make_tiny_preset(tmp_path / "preset", **SMALL_MODEL)
    examples = multiple_choice_examples(24, seed=4)
    reference, result = _run(preset, tmp_path / "straight", examples)
    assert result.status == "completed" and result.global_step == 12
    assert 0.0 <= result.best_metric <= 1.0 and result.metric == "accuracy"

    token = CancellationToken()
    _, cancelled = _run(
        preset, tmp_path / "run", examples, token=token, callbacks=[CancelAt(CANCEL_AT, token)]
    )
    assert cancelled.cancelled and cancelled.global_step == CANCEL_AT
    resumed, result = _run(preset, tmp_path / "run", examples, resume=True)
    assert result.status == "completed" and result.global_step == 12
    difference = max(
        float(np.max(np.abs(keras.ops.convert_to_numpy(a) - keras.ops.convert_to_numpy(b))))
        for a, b in zip(reference.model.trainable_variables, resumed.model.trainable_variables)
    )
    assert difference <= 1e-6
