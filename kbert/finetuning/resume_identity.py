"""What a resumed fine-tuning run must share with the run that wrote its checkpoint."""

import hashlib

from kbert.finetuning.fine_tuning_config import RESUMABLE_CHANGES
from kbert.training.run_state import model_source


def training_data_fingerprint(examples):
    """Identifies the training data: a resumed run must see the same examples in order.

    The checkpoint's state holds it (`"training_data"`), so a caller can tell whether
    a file is the data a run was trained on before resuming it.
    """
    digest = hashlib.sha256()
    for example in examples:
        digest.update(repr(example).encode("utf-8"))
    return f"{len(examples)} examples, sha256 {digest.hexdigest()[:16]}"


def run_identity(task, preset, config, label_names, data_fingerprint):
    """The identity a checkpoint records: the task's options, the model source, the
    training data, the label names and the settings a resumed run may not change.

    Args:
        task: the run's `FineTuningRecipe`.
        preset: the preset the run started from.
        config: the run's `FineTuningConfig`.
        label_names: the labels of the training data.
        data_fingerprint: `training_data_fingerprint` of the training examples.
    """
    return {
        "task": task.options(),
        "preset": model_source(preset),
        "training_data": data_fingerprint,
        "label_names": label_names,
        "config": {
            key: value
            for key, value in config.to_dict().items()
            if key not in RESUMABLE_CHANGES
        },
    }
