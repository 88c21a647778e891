"""benchmarks/onnx_export_time.py still runs and measures what it says, at BERT-tiny size.

The script is not part of the package: its folder is put on the import path, as when it
runs. It measures in this process on the pass's backend (the export is the same code
on each); one pass is enough.
"""

from pathlib import Path

import pytest

from model_helpers import TINY
from process_helpers import on_the_process_pass

pytest.importorskip("onnxruntime", reason="ONNX export is the optional kbert[onnx] extra")
pytest.importorskip("onnx", reason="ONNX export is the optional kbert[onnx] extra")

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@on_the_process_pass("it measures the same export on every backend")
@pytest.mark.slow
def test_the_export_benchmark_measures_the_export_and_both_graphs(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import onnx_export_time

    from kbert.inference.onnx_export import export_graph
    from kbert.models import BertBackbone
    from kbert.models import BertClassifier

    # Long enough for the benchmark's 42-token sentences.
    model = BertClassifier(BertBackbone(**{**TINY, "max_positions": 64}), num_classes=2)
    model.save_to_preset(tmp_path / "preset")
    other = export_graph(model, tmp_path / "other.onnx")
    result = onnx_export_time.main(["--preset", str(tmp_path / "preset"), "--compare-graph",
                                    str(other), "--int8", "--rounds", "2"])
    export = result["export"]
    assert export["seconds"] > 0 and export["rss_peak_during_mib"] >= export["rss_before_mib"]
    assert export["process_peak_mib"] >= export["rss_peak_during_mib"]
    for count in (1, 64):
        figures = result["onnxruntime"][count]
        assert set(figures["ms"]) == {"new", "compared", "new-int8"}
        assert figures["max_logit_diff"]["compared"] == 0.0  # the same graph, the same numbers
        assert figures["max_probability_diff"]["new-int8"] < 0.05


def test_rotated_timings_start_each_round_with_the_next_function(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import onnx_export_time

    calls = []
    functions = {name: (lambda name=name: calls.append(name)) for name in "abc"}
    seconds = onnx_export_time.rotated_timings(functions, rounds=3, warmup=0)
    assert calls == list("abc" "bca" "cab")
    assert {name: len(values) for name, values in seconds.items()} == {"a": 3, "b": 3, "c": 3}
