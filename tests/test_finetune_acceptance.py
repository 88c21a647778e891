"""Fine-tuning a tiny BERT on small learnable data reaches the acceptance scores.

The data and the tiny preset come from tests/fine_tuning_data.py (its docstring gives
each task's rule and why those rules were chosen).
"""

import keras
import pytest

from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset
from fine_tuning_data import pair_examples
from fine_tuning_data import qa_examples
from fine_tuning_data import token_classification_examples

# Measured on 2 CPU cores, 25 batches of 16 of the classification test: JAX ~0.3 s an
# epoch after ~8 s of compilation, TensorFlow ~1 s after ~15 s, PyTorch 3-15 s (eager).
ACCURACY_BACKEND = "jax"

only_accuracy_backend = pytest.mark.skipif(
    keras.backend.backend() != ACCURACY_BACKEND,
    reason=(
        f"Accuracy acceptance runs under {ACCURACY_BACKEND} only, the fastest backend for "
        "this tiny model on CPU; `model.fit` on kbert's datasets is tested on every backend "
        "in test_bucketed_dataset.py and resuming in test_finetune_resume.py."
    ),
)


def _fine_tune(tmp_path, task, train, evaluation, epochs):
    from kbert.finetuning import FineTuner
    from kbert.finetuning import FineTuningConfig

    preset = make_tiny_preset(tmp_path / "preset")
    config = FineTuningConfig(
        epochs=epochs, batch_size=16, learning_rate=2e-3, checkpoint_every=None
    )
    tuner = FineTuner(task, preset, tmp_path / "run", config)
    result = tuner.run(train, evaluation)
    assert result.status == "completed"
    assert result.preset_path == tmp_path / "run" / "model"
    return result


# Epochs: with the seeds tried (0-8, 1234), classification leaves chance after 1-3
# epochs, pair classification after 1-2, tagging and QA within the first; twice that
# leaves a margin at ~0.3-3 s an epoch.
@only_accuracy_backend
@pytest.mark.parametrize(
    "task_name, generate, train_size, epochs, metric, threshold",
    [
        ("classification", classification_examples, 400, 8, "accuracy", 0.95),
        ("pair-classification", pair_examples, 600, 4, "accuracy", 0.95),
        ("token-classification", token_classification_examples, 400, 3, "f1", 0.90),
    ],
)
def test_fine_tuning_reaches_the_acceptance_score(
    tmp_path, task_name, generate, train_size, epochs, metric, threshold
):
    from kbert.finetuning import make_recipe

    task = make_recipe(task_name)
    result = _fine_tune(tmp_path, task, generate(train_size, 1), generate(100, 2), epochs)
    # Scored from the saved preset on a split used neither for training nor for selection.
    model = task.model_class.from_preset(result.preset_path)
    scores = task.evaluate(model, generate(200, 3))
    print(f"{task_name}: {scores}")
    assert scores[metric] >= threshold


@only_accuracy_backend
def test_question_answering_reaches_90_percent_exact_match_beyond_the_first_window(tmp_path):
    from kbert.data.qa_windows import make_qa_windows
    from kbert.data.question_windowing import QuestionWindowing
    from kbert.finetuning import make_recipe

    task = make_recipe("qa", windowing=QuestionWindowing(max_length=None, doc_stride=24))
    result = _fine_tune(tmp_path, task, qa_examples(400, 1), qa_examples(60, 2), epochs=3)
    model = task.model_class.from_preset(result.preset_path)
    test_examples = qa_examples(120, 3, min_sentences=7)
    first_window_end = []
    for example in test_examples:
        windowing = QuestionWindowing(64, 24)
        window = make_qa_windows(model.tokenizer, example.question, example.context, windowing)[0]
        first_window_end.append(window.offsets[window.context_mask][-1, 1])
    later = [
        example
        for example, end in zip(test_examples, first_window_end)
        if example.answers[0].end > end
    ]
    assert len(later) >= 20
    scores = task.evaluate(model, test_examples, max_length=64)
    later_scores = task.evaluate(model, later, max_length=64)
    print("question answering:", scores, "answers beyond the first window:", later_scores)
    assert scores["exact_match"] >= 90.0
    assert later_scores["exact_match"] >= 90.0
