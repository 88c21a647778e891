"""A search folder is input like any other: its journal and trial folders cannot hurt.

One tiny two-trial search runs once; each test copies its finished folder, damages it
the way a hostile or broken one would be, and runs the search again (every trial is
finished, so the rerun only reads the journal and keeps the best model). Nothing
outside the folder may be read, written or copied, and every problem is one
`ValueError` naming the journal (or the file) instead of a traceback from Optuna.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest
from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset
from process_helpers import on_the_process_pass

from kbert.files import FileRefusedError

pytestmark = on_the_process_pass(
    "the search is backend-independent bookkeeping around FineTuner runs"
)
pytest.importorskip("optuna")

GRID = "learning_rate=1e-3,3e-4"
SECRET = "SECRET-TOKEN-0451\n"


def _search(preset, output, space=GRID, trials=None):
    from kbert.finetuning import FineTuningConfig
    from kbert.finetuning import FineTuningSearch

    config = FineTuningConfig(epochs=1, batch_size=4)
    return FineTuningSearch("classification", preset, output, space, config, trials=trials)


def _data():
    return classification_examples(8, 0), classification_examples(4, 1)


@pytest.fixture(scope="module")
def finished_search(tmp_path_factory):
    root = tmp_path_factory.mktemp("search")
    preset = make_tiny_preset(
        root / "preset", hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32
    )
    result = _search(preset, root / "search").run(*_data())
    assert result.status == "completed"
    return root


@pytest.fixture
def search(finished_search, tmp_path):
    """A fresh copy of the finished search, and a secret file outside it."""
    output = tmp_path / "search"
    shutil.copytree(finished_search / "search", output, symlinks=True)
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET, encoding="utf-8")
    return {"output": output, "preset": finished_search / "preset", "secret": secret}


def _rerun(search):
    shutil.rmtree(search["output"] / "model", ignore_errors=True)
    return _search(search["preset"], search["output"]).run(*_data())


def _nothing_secret_kept(search):
    model = search["output"] / "model"
    for path in model.rglob("*") if model.exists() else []:
        assert not path.is_symlink()
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes()


def _journal_lines(search):
    return (search["output"] / "search.journal").read_text(encoding="utf-8").splitlines()


def _write_journal(search, lines):
    text = "\n".join(lines) + "\n"
    (search["output"] / "search.journal").write_text(text, encoding="utf-8")


def _edit_rows(search, edit):
    """Applies `edit(row)` to every trial's row of scores in the journal."""
    lines = []
    for line in _journal_lines(search):
        record = json.loads(line)
        if "row" in record.get("user_attr", {}):
            edit(record["user_attr"]["row"])
        lines.append(json.dumps(record))
    _write_journal(search, lines)


def test_an_untouched_search_reruns_and_keeps_its_best_model(search):
    result = _rerun(search)
    assert result.status == "completed" and result.trials_run == 0
    assert (search["output"] / "model" / "model.weights.h5").is_file()


def test_a_trials_vocabulary_linked_to_a_secret_is_not_copied(search):
    for vocabulary in search["output"].glob("trials/*/model/vocab.txt"):
        vocabulary.unlink()
        vocabulary.symlink_to(search["secret"])
    with pytest.raises(FileRefusedError, match="vocab.txt"):
        _rerun(search)
    _nothing_secret_kept(search)


def test_a_trials_model_folder_linked_outside_is_not_copied(search):
    outside = search["secret"].parent / "model"
    for model in search["output"].glob("trials/*/model"):
        shutil.copytree(model, outside, dirs_exist_ok=True)
        shutil.rmtree(model)
        model.symlink_to(outside, target_is_directory=True)
    (outside / "vocab.txt").write_text(SECRET, encoding="utf-8")
    with pytest.raises(FileRefusedError, match="model"):
        _rerun(search)
    _nothing_secret_kept(search)


@pytest.mark.parametrize("folder", ["../../outside", "/etc"])
def test_a_journal_row_naming_another_folder_is_refused(search, folder):
    def elsewhere(row):
        row["folder"] = folder

    _edit_rows(search, elsewhere)
    with pytest.raises(ValueError, match=r"search\.journal: trial \d names the folder"):
        _rerun(search)
    assert not (search["output"] / "model").exists()


def test_a_linked_journal_is_not_written_through(search):
    journal = search["output"] / "search.journal"
    outside = search["secret"].parent / "journal"
    shutil.move(journal, outside)
    journal.symlink_to(outside)
    before = outside.read_bytes()
    with pytest.raises(FileRefusedError, match="search.journal.*symbolic link"):
        _rerun(search)
    assert outside.read_bytes() == before


def test_a_torn_last_record_is_repaired_when_the_journal_is_next_written(search):
    journal = search["output"] / "search.journal"
    torn = _journal_lines(search)[-1][:40]
    with open(journal, "a", encoding="utf-8") as file:
        file.write(torn + '\\u00')  # a writer killed mid-record, mid-escape
    assert _rerun(search).status == "completed"
    from kbert.finetuning.search_journal import search_journal_backend

    backend = search_journal_backend(journal)
    backend.append_logs([{"op_code": 2, "worker_id": "w", "study_id": 0, "user_attr": {"k": 1}}])
    records = list(backend.read_logs(0))
    assert records[-1]["user_attr"] == {"k": 1}
    assert journal.read_text(encoding="utf-8").endswith('"user_attr":{"k":1}}\n')
    assert _rerun(search).status == "completed"


RECORDS = {
    "a garbage line": ("not json at all", r"search\.journal:\d+: not a journal record"),
    "an unknown operation": (
        '{"op_code": 99, "worker_id": "w"}', r"search\.journal:\d+: unknown journal operation"
    ),
    "a missing study id": (
        '{"op_code": 2, "worker_id": "w", "user_attr": {"x": 1}}', "lacks the field 'study_id'"
    ),
    "a deep record": ("[" * 100_000 + "]" * 100_000, "nested more than"),
    "a trial index of the wrong type": (
        '{"op_code": 4, "worker_id": "w", "study_id": 0, "datetime_start": null, "state": 4, '
        '"user_attrs": {"trial_index": "0"}}',
        "has the trial index '0'",
    ),
    "a string where a number belongs": (
        '{"op_code": 7, "worker_id": "w", "trial_id": 0, "step": 1, "intermediate_value": "x"}',
        "'intermediate_value' is not a valid number",
    ),
    "a record of 2 MB": ('{"op_code": 2, "x": "' + "a" * 2**21 + '"}', "longer than"),
}


@pytest.mark.parametrize("case", RECORDS)
def test_a_damaged_journal_record_is_one_sentence_naming_the_file_and_line(search, case):
    record, message = RECORDS[case]
    _write_journal(search, [*_journal_lines(search), record])
    with pytest.raises(ValueError, match=message) as raised:
        _rerun(search)
    assert "search.journal" in str(raised.value)
    assert "move it away" in str(raised.value)


def test_a_row_without_the_metric_is_refused(search):
    _edit_rows(search, lambda row: row.pop("accuracy"))
    with pytest.raises(ValueError, match="trial 0 has no accuracy score"):
        _rerun(search)


def test_a_journal_edited_setting_outside_the_searched_range_is_not_trained(tmp_path):
    import optuna

    from kbert.finetuning.search_journal import search_journal_backend

    space = "learning_rate=1e-4:1e-3:log"
    search = _search("demo", tmp_path / "search", space, trials=2)
    tmp_path.joinpath("search").mkdir()
    storage = optuna.storages.journal.JournalStorage(search_journal_backend(search.journal))
    study = optuna.create_study(study_name="kbert-search", storage=storage, direction="maximize")
    study.set_user_attr("settings", search._settings())
    study.enqueue_trial({"learning_rate": 50.0}, user_attrs={"trial_index": 0})
    trial = study.ask()
    trial.suggest_float("learning_rate", 1e-4, 1e-3, log=True)  # given 50.0 by the queue
    study.tell(trial, state=optuna.trial.TrialState.FAIL)  # abandoned: run again at its point
    with pytest.raises(ValueError, match=r"trial 0 has the settings \{'learning_rate': 50\.0\}"):
        search.run(*_data())
    assert not (tmp_path / "search" / "trials" / "trial-000").exists()


@pytest.mark.slow
def test_kbert_finetune_reports_a_damaged_journal_in_one_line(search, tmp_path):
    lines = _journal_lines(search)
    _write_journal(search, [lines[0], '{"op_code": 99, "worker_id": "w"}', *lines[1:]])
    for name, examples in zip(("train", "dev"), _data()):
        rows = ["text,label"] + [f"{example.text},{example.label}" for example in examples]
        (tmp_path / f"{name}.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    command = [
        sys.executable, "-m", "kbert.cli", "finetune", "--task", "classification",
        "--model", str(search["preset"]), "--train", str(tmp_path / "train.csv"),
        "--eval", str(tmp_path / "dev.csv"), "--output", str(search["output"]),
        "--epochs", "1", "--batch-size", "4", "--search", GRID,
    ]
    environment = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")
    done = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=300)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "search.journal:2: unknown journal operation" in done.stderr
