"""What kbert writes and later trusts is checked before it is trusted.

A training checkpoint carries the SHA-256 of its contents: flipped bytes (in the HDF5
superblock, in the JSON state, in a weight), a truncated or a zeroed file is refused by
`--resume` in one sentence naming the file and the remedy, without HDF5's internals;
so is a checkpoint or a preset whose weights hold NaN or infinity.
"""

import math

import h5py
import numpy as np
import pytest
from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset

from kbert.checkpoints.weights_file import read_weights
from kbert.checkpoints.weights_file import write_weights
from kbert.finetuning import ClassificationRecipe
from kbert.finetuning import FineTuner
from kbert.finetuning import FineTuningConfig
from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.training.cancellation_token import CancellationToken
from kbert.training.training_checkpoint import TrainingCheckpoint

from model_helpers import TINY

REFUSAL = (
    r"^Cannot resume from the training checkpoint '[^']*training_checkpoint\.h5': [^\n]*; "
    r"delete it to start the run again, or start a new run in an empty folder\.$"
)
HDF5_INTERNALS = ("sblock", "eof =", "H5F", "Unable to synchronously")


@pytest.fixture(scope="module")
def saved_checkpoint(tmp_path_factory):
    model = BertClassifier(BertBackbone(**TINY), num_classes=2)
    model.compile()
    path = tmp_path_factory.mktemp("checkpoint") / "training_checkpoint.h5"
    TrainingCheckpoint(path).save(model, {"global_step": 3})
    return path


def data_offset(path, name):
    """Where the data of dataset `name` starts in the HDF5 file `path`."""
    with h5py.File(path, "r") as handle:
        return handle[name].id.get_offset()


def largest_dataset(path):
    with h5py.File(path, "r") as handle:
        names = []
        handle.visititems(
            lambda name, item: names.append(name) if isinstance(item, h5py.Dataset) else None
        )
        return max(names, key=lambda name: handle[name].size)


def flip(data, offset, count):
    data[offset : offset + count] = bytes(byte ^ 0xFF for byte in data[offset : offset + count])


def damaged(original, how, path):
    data = bytearray(original)
    if how == "superblock flipped":
        flip(data, 0, 64)
    elif how == "state flipped":
        flip(data, data_offset(path, "state_json") + 10, 16)
    elif how == "weight flipped":
        flip(data, data_offset(path, largest_dataset(path)) + 512, 2048)
    elif how == "truncated":
        data = data[: len(data) // 2]
    elif how == "zeroed":
        data = bytearray(len(data))
    return bytes(data)


@pytest.mark.parametrize(
    "how", ["superblock flipped", "state flipped", "weight flipped", "truncated", "zeroed"]
)
def test_a_damaged_checkpoint_is_refused_with_the_remedy(saved_checkpoint, tmp_path, how):
    original = saved_checkpoint.read_bytes()
    path = tmp_path / "training_checkpoint.h5"
    path.write_bytes(damaged(original, how, saved_checkpoint))
    assert path.read_bytes() != original
    with pytest.raises(ValueError, match=REFUSAL) as refusal:
        TrainingCheckpoint(path).read_state()
    assert not any(internal in str(refusal.value) for internal in HDF5_INTERNALS), refusal.value


def test_the_intact_checkpoint_reads(saved_checkpoint):
    assert TrainingCheckpoint(saved_checkpoint).read_state()["global_step"] == 3


def test_a_checkpoint_with_non_finite_weights_is_refused(tmp_path):
    model = BertClassifier(BertBackbone(**TINY), num_classes=2)
    model.compile()
    variable = model.backbone.weights[0]
    variable.assign(np.full(variable.shape, math.nan, "float32"))
    path = tmp_path / "training_checkpoint.h5"
    TrainingCheckpoint(path).save(model, {"global_step": 1})
    with pytest.raises(ValueError, match=REFUSAL) as refusal:
        TrainingCheckpoint(path).read_state()
    assert "holds NaN or infinite values" in str(refusal.value)


def _with_one_weight_changed(folder, change):
    """Rewrites `folder`'s weights file with `change` applied to one weight; its name."""
    weights_path = folder / "model.weights.h5"
    weights = read_weights(weights_path)
    name = sorted(weights)[3]
    weights[name] = change(weights[name]).astype("float32")
    write_weights(weights_path, weights)
    return name


def test_a_preset_with_non_finite_weights_is_refused(tmp_path):
    BertBackbone(**TINY).save_to_preset(tmp_path / "preset")
    name = _with_one_weight_changed(
        tmp_path / "preset",
        lambda array: np.where(np.arange(array.size) == 1, np.inf, 0.0).reshape(array.shape),
    )
    with pytest.raises(ValueError, match=rf"model\.weights\.h5'.*`{name}` holds NaN or infinite"):
        BertBackbone.from_preset(tmp_path / "preset")


def test_a_preset_whose_weights_changed_after_saving_is_refused(tmp_path):
    BertBackbone(**TINY).save_to_preset(tmp_path / "preset")
    # Finite and well-formed, but not what was saved.
    _with_one_weight_changed(tmp_path / "preset", lambda array: array + np.float32(1e-3))
    with pytest.raises(ValueError, match=r"model\.weights\.h5'.*do not match the checksum.*again\.$"):
        BertBackbone.from_preset(tmp_path / "preset")


def test_a_preset_saved_without_a_checksum_still_loads(tmp_path):
    import json

    BertBackbone(**TINY).save_to_preset(tmp_path / "preset")
    metadata_path = tmp_path / "preset" / "metadata.json"
    metadata = json.loads(metadata_path.read_text())
    assert len(metadata.pop("weights_sha256")) == 64
    metadata_path.write_text(json.dumps(metadata))
    assert BertBackbone.from_preset(tmp_path / "preset").count_params() > 0


class CancelAt:
    def __init__(self, step, token):
        self.step, self.token = step, token

    def on_step(self, step, logs):
        if step == self.step:
            self.token.cancel()


def test_resuming_a_fine_tune_from_a_damaged_checkpoint_refuses_and_writes_no_model(tmp_path):
    preset = make_tiny_preset(
        tmp_path / "preset", hidden_size=16, num_layers=1, num_heads=2, intermediate_size=16
    )
    config = FineTuningConfig(epochs=1, batch_size=4, checkpoint_every=1, seed=1, max_length=16)
    examples = classification_examples(16, seed=3)
    output = tmp_path / "run"
    token = CancellationToken()
    callbacks = [CancelAt(2, token)]
    tuner = FineTuner(
        ClassificationRecipe(), preset, output, config, callbacks=callbacks, cancellation=token
    )
    result = tuner.run(examples)
    assert result.cancelled and result.checkpoint_path.is_file()
    path = result.checkpoint_path
    path.write_bytes(damaged(path.read_bytes(), "weight flipped", path))
    resumed = FineTuner(ClassificationRecipe(), preset, output, config)
    with pytest.raises(ValueError, match=REFUSAL):
        resumed.run(examples, resume=True)
    assert not (output / "model").exists()
