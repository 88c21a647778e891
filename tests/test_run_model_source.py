"""A resumed run names the model it started from by what it is, not by how it was spelt."""

import pytest

from kbert.training.run_state import model_source
from kbert.training.run_state import start_state


class _SavedCheckpoint:
    """A checkpoint that holds `state` (what `TrainingCheckpoint.read_state` returns)."""

    def __init__(self, path, state):
        self.path, self._state = path, state

    def exists(self):
        return True

    def read_state(self):
        return dict(self._state)


def _resume(tmp_path, saved, identity):
    checkpoint = _SavedCheckpoint(tmp_path / "run" / "training_checkpoint.h5", saved)
    return start_state(checkpoint, tmp_path / "run", identity, {"step": 0}, resume=True)


def test_a_local_folder_is_named_by_its_absolute_path_and_a_name_as_given(tmp_path, monkeypatch):
    (tmp_path / "work" / "model").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    assert model_source("model") == str(tmp_path / "work" / "model")
    assert model_source(tmp_path / "work" / "model") == str(tmp_path / "work" / "model")
    assert model_source("./model/") == str(tmp_path / "work" / "model")
    assert model_source("bert-base-uncased") == "bert-base-uncased"  # no such folder here
    assert model_source("hf://google-bert/bert-base-uncased") == "hf://google-bert/bert-base-uncased"


def test_a_run_resumes_with_its_model_folder_spelt_another_way(tmp_path, monkeypatch):
    (tmp_path / "work" / "model").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    saved = {"init_from": model_source("model"), "config": {"steps": 10}, "step": 7}
    monkeypatch.chdir(tmp_path)
    identity = {"init_from": model_source(str(tmp_path / "work" / "model")), "config": {"steps": 10}}
    assert _resume(tmp_path, saved, identity)["step"] == 7


def test_a_checkpoint_that_named_its_folder_relatively_still_resumes(tmp_path, monkeypatch):
    """Checkpoints written before folders were named absolutely held the spelling given."""
    (tmp_path / "work" / "model").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    saved = {"preset": "model", "task": "classification", "step": 3}
    identity = {"preset": model_source(str(tmp_path / "work" / "model")), "task": "classification"}
    assert _resume(tmp_path, saved, identity)["step"] == 3


def test_another_model_folder_is_still_refused(tmp_path, monkeypatch):
    for name in ("model", "other"):
        (tmp_path / name).mkdir()
    monkeypatch.chdir(tmp_path)
    saved = {"init_from": model_source("model"), "step": 1}
    with pytest.raises(ValueError, match="different settings.*init_from"):
        _resume(tmp_path, saved, {"init_from": model_source("other")})
