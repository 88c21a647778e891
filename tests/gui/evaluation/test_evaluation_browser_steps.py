"""benchmarks/evaluation_browser_steps.py still runs every step on a real browser window."""

from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"


@pytest.fixture
def steps(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import evaluation_browser_steps

    return evaluation_browser_steps


def test_every_step_is_timed_on_a_synthetic_evaluation(qapp, steps):
    predictions = steps.synthetic_predictions(40, seed=1)
    assert len(predictions.rows) == 40
    assert {row["correct"] for row in predictions.rows} == {True, False}
    labels, counts = predictions.confusion_matrix()
    assert labels == ["neg", "pos"] and sum(map(sum, counts)) == 40
    timings = steps.time_steps(qapp, predictions)
    assert list(timings) == [
        "build", "show (first layout and paint)", "sort by probability", "sort by text",
        "confusion-matrix cell", "errors only", "every row again", "repaint of the rows in view",
    ]
    assert all(milliseconds > 0 for milliseconds in timings.values())
