"""`kbert finetune --search`: the grid, restarts, the best kept, a killed search resumed, and
two processes sharing one search (an Optuna study in the output folder).

The end-to-end tests run `kbert finetune` in fresh interpreters (a process is killed, two
run at once) on a one-layer model with a few batches per trial. They run on one pass
only: the search is backend-independent bookkeeping around `FineTuner`, whose runs the
other passes test on their backends.
"""

import csv
import json
import os
import subprocess
import sys
import time

import pytest
from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset
from process_helpers import finished_outputs
from process_helpers import on_the_process_pass

from kbert.finetuning.search_space import PAPER_GRID
from kbert.finetuning.search_space import SearchSpace

GRID = "learning_rate=1e-3,3e-4;warmup_ratio=0,0.5"
PROCESS_TIMEOUT = 600  # seconds; a start and four one-epoch trials take ~30 s unloaded

only_on_the_process_pass = on_the_process_pass(
    "the search is backend-independent (the end-to-end runs start JAX processes); its "
    "trials are FineTuner runs, which every pass tests on its backend"
)


def test_the_paper_grid_is_appendix_a3():
    points = SearchSpace.parse("paper").points()
    assert len(points) == 4 * 2 * 3 == len({tuple(point.items()) for point in points})
    assert {point["learning_rate"] for point in points} == {5e-5, 4e-5, 3e-5, 2e-5}
    assert {point["batch_size"] for point in points} == {16, 32}
    assert {point["epochs"] for point in points} == {2, 3, 4}
    assert PAPER_GRID["epochs"] == (2, 3, 4)


def test_a_grid_of_ones_own_inline_json_or_a_file(tmp_path):
    inline = SearchSpace.parse("learning_rate=3e-5, 2e-5; batch-size=16,32")
    assert inline.points() == [
        {"learning_rate": 3e-5, "batch_size": 16},
        {"learning_rate": 3e-5, "batch_size": 32},
        {"learning_rate": 2e-5, "batch_size": 16},
        {"learning_rate": 2e-5, "batch_size": 32},
    ]
    assert isinstance(inline.points()[0]["batch_size"], int)
    text = '{"learning_rate": [3e-5, 2e-5], "batch_size": [16, 32]}'
    assert SearchSpace.parse(text).points() == inline.points()
    (tmp_path / "grid.json").write_text(text, encoding="utf-8")
    assert SearchSpace.parse(str(tmp_path / "grid.json")).points() == inline.points()


@pytest.mark.parametrize(
    "text, message",
    [
        ("dropout=0.1,0.2", "Cannot search over 'dropout'"),
        ("batch_size=16.5", "`batch_size` takes int values"),
        ("learning_rate=", "write NAME=V1,V2"),
        ("learning_rate=1e-3,1e-3", "repeats a value"),
        ("epochs=0", "`epochs` must be"),
        ("{not json", "not valid JSON"),
        (";", "The search grid is empty"),
    ],
)
def test_a_bad_grid_says_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        SearchSpace.parse(text)


def test_ranges_inline_or_json_make_a_sampled_space(tmp_path):
    from kbert.finetuning.search_range import SearchRange

    space = SearchSpace.parse("learning_rate=1e-5:1e-3:log; epochs=1:3; batch_size=16,32")
    assert space.sampled
    assert space.ranges == {
        "learning_rate": SearchRange(1e-5, 1e-3, log=True), "epochs": SearchRange(1, 3)
    }
    assert isinstance(space.ranges["epochs"].low, int)
    assert space.grid == {"batch_size": (16, 32)}
    text = json.dumps(space.to_dict())
    assert SearchSpace.parse(text).to_dict() == space.to_dict()
    assert not SearchSpace.parse(GRID).sampled
    with pytest.raises(ValueError, match="has no list of points"):
        space.points()


@pytest.mark.parametrize(
    "text, message",
    [
        ("learning_rate=1e-3:1e-5", "needs low < high"),
        ("learning_rate=0:1e-3:log", "needs low > 0"),
        ("learning_rate=1e-5:1e-3:cubic", "write learning_rate=LOW:HIGH or LOW:HIGH:log"),
        ("epochs=1:2.5", "`epochs` takes int values"),
        ("epochs=0:3", "`epochs` must be"),
        ('{"learning_rate": {"low": 1e-5}}', "A range of 'learning_rate' is"),
        ('{"learning_rate": {"low": 1e-5, "high": 1e-3, "log": "yes"}}', "true or false"),
    ],
)
def test_a_bad_range_says_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        SearchSpace.parse(text)


def test_a_sampled_search_needs_a_trial_count_and_a_grid_none(tmp_path):
    from kbert.finetuning import FineTuningSearch

    ranges = "learning_rate=1e-5:1e-3:log"
    with pytest.raises(ValueError, match="give the number of trials"):
        FineTuningSearch("classification", "demo", tmp_path, ranges)
    with pytest.raises(ValueError, match="raise the number of trials instead"):
        FineTuningSearch("classification", "demo", tmp_path, ranges, restarts=2, trials=4)
    with pytest.raises(ValueError, match="A grid runs every point"):
        FineTuningSearch("classification", "demo", tmp_path, GRID, trials=4)
    assert FineTuningSearch("classification", "demo", tmp_path, ranges, trials=5).total_trials == 5


class _CancelWhenFileAppears:
    """Cancels the run (as the app's Stop button does) once `path` exists."""

    def __init__(self, path):
        self.path = path

    def is_set(self):
        return self.path.exists()


@pytest.mark.slow
@only_on_the_process_pass
def test_a_sampled_search_draws_its_trials_and_reruns_a_stopped_one_at_its_point(search_folder):
    from kbert.finetuning import FineTuningConfig
    from kbert.finetuning import FineTuningSearch

    output = search_folder / "sampled"
    space = "learning_rate=1e-4:1e-2:log;warmup_ratio=0,0.5"
    config = FineTuningConfig(epochs=1, batch_size=4, checkpoint_every=2)
    train = classification_examples(16, 0)
    dev = classification_examples(8, 1)
    stop = _CancelWhenFileAppears(output / "trials" / "trial-001" / "training_checkpoint.h5")

    stopped = FineTuningSearch(
        "classification", search_folder / "preset", output, space, config, cancellation=stop,
        trials=3,
    ).run(train, dev)
    assert stopped.status == "cancelled" and [row["trial"] for row in stopped.trials] == [0]
    drawn = {t.user_attrs["trial_index"]: t.params for t in _journal_trials(output)}

    result = FineTuningSearch(
        "classification", search_folder / "preset", output, space, config, trials=3
    ).run(train, dev)

    assert result.status == "completed" and result.trials_run == 2
    rows = result.trials
    assert [row["trial"] for row in rows] == [0, 1, 2]
    for row in rows:
        assert 1e-4 <= row["learning_rate"] <= 1e-2 and row["warmup_ratio"] in (0.0, 0.5)
    assert len({row["learning_rate"] for row in rows}) == 3
    # The stopped trial ran again at the point it had drawn, from its checkpoint.
    assert rows[1]["learning_rate"] == drawn[1]["learning_rate"]
    assert rows[0]["learning_rate"] == drawn[0]["learning_rate"]
    best = max(rows, key=lambda row: (row["accuracy"], -row["trial"]))
    assert result.best == best
    kept = output / "model" / "model.weights.h5"
    assert kept.read_bytes() == (output / best["folder"] / "model" / "model.weights.h5").read_bytes()
    saved = json.loads((output / "search_trials.json").read_text(encoding="utf-8"))
    assert saved["space"]["learning_rate"] == {"low": 1e-4, "high": 1e-2, "log": True}
    assert saved["total_trials"] == 3


def _write_csv(path, examples):
    rows = ["text,label"] + [f"{example.text},{example.label}" for example in examples]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _search_command(folder, output, restarts):
    """`kbert finetune --search` on a one-layer model: four batches of 4 per trial."""
    return [
        sys.executable, "-m", "kbert.cli", "finetune", "--task", "classification",
        "--model", str(folder / "preset"), "--train", str(folder / "train.csv"),
        "--eval", str(folder / "dev.csv"), "--output", str(output), "--epochs", "1",
        "--batch-size", "4", "--checkpoint-every", "2", "--search", GRID,
        "--restarts", str(restarts), "--json",
    ]


@pytest.fixture
def search_folder(tmp_path):
    make_tiny_preset(
        tmp_path / "preset", hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64
    )
    _write_csv(tmp_path / "train.csv", classification_examples(16, 0))
    _write_csv(tmp_path / "dev.csv", classification_examples(8, 1))
    return tmp_path


def _start(command):
    environment = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")
    return subprocess.Popen(
        command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _results(processes):
    """Each process's JSON result (its last line)."""
    return [
        json.loads(stdout.strip().splitlines()[-1])
        for stdout in finished_outputs(processes, PROCESS_TIMEOUT)
    ]


def _journal_trials(output):
    import optuna

    storage = optuna.storages.journal.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(output / "search.journal"))
    )
    return optuna.load_study(study_name="kbert-search", storage=storage).get_trials()


@pytest.mark.slow
@only_on_the_process_pass
def test_a_killed_search_resumes_and_keeps_the_best_of_all_trials(search_folder):
    output = search_folder / "search"
    command = _search_command(search_folder, output, restarts=2)
    # Killed in its fourth trial (trial 3), once that trial has written a checkpoint.
    process = _start(command)
    checkpoint = output / "trials" / "trial-003" / "training_checkpoint.h5"
    try:
        deadline = time.monotonic() + PROCESS_TIMEOUT
        while not checkpoint.exists() and process.poll() is None:
            assert time.monotonic() < deadline, "the search never reached its fourth trial"
            time.sleep(0.05)
        assert process.poll() is None, process.communicate()[1][-3000:]
    finally:
        process.kill()
        process.communicate()
    finished = [t for t in _journal_trials(output) if t.state.name == "COMPLETE"]
    assert sorted(t.user_attrs["trial_index"] for t in finished) == [0, 1, 2]

    (result,) = _results([_start(command)])

    # Only the five trials left ran; the abandoned one was taken up again.
    assert result["trials_run"] == 5 and result["total_trials"] == 8
    assert result["status"] == "completed"
    rows = result["trials"]
    assert [row["trial"] for row in rows] == list(range(8))
    assert [(row["learning_rate"], row["warmup_ratio"], row["seed"]) for row in rows] == [
        (rate, warmup, seed) for rate in (1e-3, 3e-4) for warmup in (0.0, 0.5) for seed in (0, 1)
    ]
    assert len({row["process"] for row in rows[:3]} | {row["process"] for row in rows[3:]}) == 2
    states = sorted(t.state.name for t in _journal_trials(output))
    assert states == ["COMPLETE"] * 8 + ["FAIL"], states  # the killed process's trial 3
    # The best by the dev metric (the first on a tie) is OUTPUT/model.
    best = max(rows, key=lambda row: (row["accuracy"], -row["trial"]))
    assert result["best"] == best
    kept = output / "model" / "model.weights.h5"
    best_weights = output / best["folder"] / "model" / "model.weights.h5"
    assert kept.read_bytes() == best_weights.read_bytes()
    # The table, as CSV and JSON.
    with open(output / "search_trials.csv", newline="", encoding="utf-8") as file:
        table = list(csv.DictReader(file))
    assert [int(row["trial"]) for row in table] == list(range(8))
    assert [float(row["accuracy"]) for row in table] == [row["accuracy"] for row in rows]
    assert {"learning_rate", "warmup_ratio", "seed", "restart", "time_s"} <= set(table[0])
    saved = json.loads((output / "search_trials.json").read_text(encoding="utf-8"))
    assert saved["trials"] == rows and saved["best_trial"] == best["trial"]


@pytest.mark.slow
@only_on_the_process_pass
def test_two_processes_share_one_search_and_run_no_trial_twice(search_folder):
    output = search_folder / "shared"
    command = _search_command(search_folder, output, restarts=1)
    first, second = _results([_start(command), _start(command)])

    assert first["trials_run"] + second["trials_run"] == 4
    assert first["trials_run"] >= 1 and second["trials_run"] >= 1
    trials = _journal_trials(output)
    assert sorted(t.state.name for t in trials) == ["COMPLETE"] * 4
    assert sorted(t.user_attrs["trial_index"] for t in trials) == [0, 1, 2, 3]
    processes = {t.user_attrs["row"]["process"] for t in trials}
    assert len(processes) == 2
    # Whichever process finished last kept the best model.
    assert "completed" in (first["status"], second["status"])
    assert (output / "model" / "model.weights.h5").is_file()


def test_a_search_needs_dev_data(tmp_path):
    from kbert.finetuning import FineTuningSearch

    search = FineTuningSearch("classification", "demo", tmp_path / "out", GRID)
    with pytest.raises(ValueError, match="needs evaluation data"):
        search.run(classification_examples(4, 0), None)
