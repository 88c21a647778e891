"""The published-data benchmark's model-FLOPs utilisation: useful work over time and peak."""

import json
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
try:
    import published_flops
finally:
    sys.path.remove(str(BENCHMARKS))


def test_model_sizes_come_from_the_hugging_face_config(tmp_path):
    config = dict(num_hidden_layers=6, hidden_size=384, intermediate_size=1536, vocab_size=30522)
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert published_flops.model_sizes(tmp_path) == (6, 384, 1536, 30522)


def test_useful_flops_count_each_example_at_its_own_length():
    layers, hidden, intermediate, vocabulary, classes = 2, 8, 16, 50, 3
    sizes = (layers, hidden, intermediate, vocabulary)
    matmul_weights = layers * (4 * hidden * hidden + 2 * hidden * intermediate)
    head = hidden * hidden + hidden * classes  # pooler and classifier

    def by_hand(length):  # 3 x the forward pass: weights, attention, head
        return 3 * (
            2 * matmul_weights * length + 4 * layers * hidden * length**2 + 2 * head
        )

    flops = published_flops.useful_flops(sizes, [5, 12], epochs=3, num_classes=classes)
    assert flops == pytest.approx(3 * (by_hand(5) + by_hand(12)))
    # Padding the short example to the long one's length is not useful work.
    assert flops < 3 * 2 * by_hand(12)


def test_utilisation_divides_by_the_engines_framework_peak():
    rates = {"jax": 100.0, "torch": 50.0}
    assert published_flops.utilisation("kbert", 1000.0, 20.0, rates) == pytest.approx(0.5)
    assert published_flops.utilisation("trainer", 1000.0, 20.0, rates) == pytest.approx(1.0)
    # kbert on the PyTorch backend is measured against PyTorch's peak; an unmeasured one
    # gives no figure rather than a wrong one.
    on_torch = published_flops.utilisation("kbert", 1000.0, 20.0, rates, {"kbert": "torch"})
    assert on_torch == pytest.approx(1.0)
    assert published_flops.utilisation("kbert", 1.0, 1.0, rates, {"kbert": "tensorflow"}) is None


def test_a_peak_measured_under_load_gives_way_to_a_higher_one(monkeypatch):
    # A product of 100 FLOPs: 10 s at first (10 FLOP/s, the machine busy), then 5 s.
    seconds = {"jax": [[10.0, 12.0], [5.0]], "torch": [[10.0], [20.0]]}
    monkeypatch.setattr(
        published_flops, "time_matmul",
        lambda framework, settings: {"flops": 100.0, "seconds": seconds[framework].pop(0)},
    )
    first = published_flops.peak_flops_per_second()
    assert first == {"jax": 10.0, "torch": 10.0}
    # The faster measurement wins, whichever came first.
    assert published_flops.peak_flops_per_second(first) == {"jax": 20.0, "torch": 10.0}


def test_utilisation_is_added_to_the_runs_that_counted_their_flops():
    results = {"sms": {"kbert": {"useful_flops": 500.0, "train_seconds": 10.0},
                       "trainer": {"train_seconds": 10.0}}}
    published_flops.add_utilisation(results, {"jax": 100.0, "torch": 100.0})
    assert results["sms"]["kbert"]["mfu"] == pytest.approx(0.5)
    assert "mfu" not in results["sms"]["trainer"]
