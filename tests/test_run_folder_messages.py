"""What a refused training run says, in words the app can show as they are.

The app shows these sentences to people who never typed `resume=True` or `--resume`:
no argument names, no flags, no code quotes.
"""

import re

import pytest

from kbert.pretraining.continued_pretraining import ContinuedPretraining
from kbert.training.run_state import start_state
from kbert.training.training_checkpoint import TrainingCheckpoint

API_WORDS = re.compile(r"resume=|--\w|`")


@pytest.fixture
def used_folder(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "notes.txt").write_text("an earlier run\n", encoding="utf-8")
    return folder


def _plain(error):
    message = str(error.value)
    assert not API_WORDS.search(message), message
    return message


def test_a_new_fine_tuning_run_in_a_used_folder_is_refused_in_plain_words(used_folder):
    checkpoint = TrainingCheckpoint(used_folder / "training_checkpoint.h5")
    with pytest.raises(ValueError) as error:
        start_state(checkpoint, used_folder, {"task": "classification"}, {}, resume=False)
    assert _plain(error) == (
        f"The output folder {str(used_folder)!r} is not empty: resume the run it holds, "
        "or choose an empty folder."
    )


def test_a_new_pretraining_run_in_a_used_folder_is_refused_in_plain_words(used_folder):
    with pytest.raises(ValueError, match="is not empty: resume the run it holds") as error:
        ContinuedPretraining("demo", used_folder).run(used_folder / "notes.txt")
    _plain(error)


def test_a_broken_checkpoint_is_refused_in_plain_words(used_folder):
    path = used_folder / "training_checkpoint.h5"
    path.write_bytes(b"not an HDF5 file at all")
    with pytest.raises(ValueError, match="Cannot resume from the training checkpoint") as error:
        TrainingCheckpoint(path).read_state()
    assert _plain(error).endswith(
        "delete it to start the run again, or start a new run in an empty folder."
    )
