"""The benchmark scripts in benchmarks/ still run and compute what they claim.

The scripts are not part of the package: their folder is put on the import path, as
when they run (`python benchmarks/gpu_benchmark.py` imports its siblings by name).
Tests that start processes run only in the JAX pass of the test suite (the scripts
pick their backends themselves; running them three times would only cost time).
"""

import json
import subprocess
import sys
from pathlib import Path

import keras
import pytest
from process_helpers import on_the_process_pass

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

only_in_the_jax_pass = pytest.mark.skipif(
    keras.config.backend() != "jax",
    reason="starts benchmark processes with their own backends; the JAX pass runs it",
)


@pytest.fixture
def benchmarks(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))


# --- Model FLOPs -----------------------------------------------------------------------------


def test_model_flops_of_bert_base_inference(benchmarks):
    from model_flops import model_flops

    # N = 12 * (4 * 768^2 + 2 * 768 * 3072) = 84,934,656 weights in the encoder's products.
    encoder = 2 * 84_934_656 * 128
    attention = 4 * 12 * 768 * 128**2
    head = 2 * (768 * 768 + 768 * 2)  # pooler + two-class classifier
    expected = encoder + attention + head
    assert model_flops("inference", 12, 768, 3072, 30522, batch_size=1, seq_length=128) == expected
    assert model_flops("inference", 12, 768, 3072, 30522, batch_size=8, seq_length=128) == (
        8 * expected
    )


def test_training_costs_three_forward_passes(benchmarks):
    from model_flops import model_flops

    sizes = dict(
        num_layers=2, hidden_size=128, intermediate_size=512, vocabulary_size=8000,
        batch_size=4, seq_length=32,
    )
    assert model_flops("finetune", **sizes) == 3 * model_flops("inference", **sizes)


def test_pretraining_flops_count_the_masked_positions_only(benchmarks):
    from model_flops import model_flops

    sizes = dict(
        num_layers=2, hidden_size=128, intermediate_size=512, vocabulary_size=8000,
        batch_size=1, seq_length=32,
    )
    one = model_flops("pretraining", masked_positions=1, **sizes)
    two = model_flops("pretraining", masked_positions=2, **sizes)
    # Each masked position adds the head's transform and tied output layer, 3 x 2 x (H^2 + H V).
    assert two - one == 6 * (128 * 128 + 128 * 8000)


def test_model_flops_rejects_an_unknown_workload(benchmarks):
    from model_flops import model_flops

    with pytest.raises(ValueError, match="training"):
        model_flops("training", 2, 128, 512, 8000, batch_size=1, seq_length=8)


# --- Timing helpers --------------------------------------------------------------------------


def test_interleaved_timings_alternate_the_functions(benchmarks):
    from timing import interleaved_timings

    calls = []
    seconds = interleaved_timings(
        {"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, rounds=3, warmup=2
    )
    assert calls == ["a", "b"] * 5
    assert sorted(seconds) == ["a", "b"]
    assert all(len(values) == 3 and min(values) >= 0 for values in seconds.values())


def test_interleaved_timings_tell_a_slow_function_from_a_fast_one(benchmarks):
    import time

    from timing import interleaved_timings, summarize

    seconds = interleaved_timings(
        {"fast": lambda: None, "slow": lambda: time.sleep(0.01)}, rounds=5, warmup=0
    )
    assert summarize(seconds["slow"])["median"] >= 0.01 > summarize(seconds["fast"])["median"]


def test_timing_helpers_reject_bad_counts(benchmarks):
    from timing import interleaved_timings, percentile, time_repeatedly

    with pytest.raises(ValueError, match="rounds=0"):
        interleaved_timings({"a": lambda: None}, rounds=0)
    with pytest.raises(ValueError, match="repeats=-1"):
        time_repeatedly(lambda: None, repeats=-1)
    with pytest.raises(ValueError, match="fraction=2"):
        percentile([1.0], 2)


def test_percentile_interpolates(benchmarks):
    from timing import percentile

    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.5) == 3.0
    assert percentile([0.0, 10.0], 0.9) == pytest.approx(9.0)


# --- The GPU benchmark's driver --------------------------------------------------------------


def test_benchmark_sizes_match_kbert(benchmarks):
    from gpu_benchmark import BERT_SIZES

    from kbert.architecture.bert_config import BERT_SIZES as KBERT_SIZES

    assert BERT_SIZES == KBERT_SIZES


def test_only_selects_engines_and_workloads(benchmarks):
    from gpu_benchmark import ENGINES, select
    from model_flops import WORKLOADS

    assert select("hf-eager,kbert-jax") == (["kbert-jax", "hf-eager"], list(WORKLOADS))
    assert select("inference_long") == (list(ENGINES), ["inference_long"])
    with pytest.raises(ValueError, match="bert-jax"):
        select("bert-jax")


@on_the_process_pass("runs the device script, whose cells choose their own backends")
@pytest.mark.slow
def test_device_run_smoke_measures_kbert_and_the_reference_in_one_table(tmp_path):
    import os

    environment = dict(os.environ, OUT=str(tmp_path), PYTHON=sys.executable)
    completed = subprocess.run(
        [
            "bash",
            str(BENCHMARKS / "device_run.sh"),
            "--smoke",
            "--only",
            "kbert-jax,kbert-jax-before,hf-eager,finetune",
            # The device's budgets are for a GPU; CI's two cores, shared by three passes,
            # ran a smoke cell past 150 s.
            "--cell-timeout",
            "400",
            "--time-budget",
            "800",
        ],
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    results = json.loads((tmp_path / "gpu_results.json").read_text())["results"]
    cells = {(record["engine"], record["workload"]): record for record in results}
    assert set(cells) == {
        ("peak-jax", "peak"), ("peak-torch", "peak"), ("kbert-jax", "finetune"),
        ("kbert-jax-before", "finetune"), ("hf-eager", "finetune"),
    }
    assert all(record["status"] == "ok" for record in results), results
    assert cells["peak-jax", "peak"]["flops_per_second"] > 0
    for engine in ("kbert-jax", "kbert-jax-before", "hf-eager"):
        record = cells[engine, "finetune"]
        assert record["sequences_per_second"] > 0 and 0 < record["mfu"]
        assert record["precision"] == "float32"  # "auto" on the CPU; no bf16 there.
    kbert, before = cells["kbert-jax", "finetune"], cells["kbert-jax-before", "finetune"]
    # Read from the HLO XLA compiled: no cuDNN on a CPU, so XLA's softmax.
    assert kbert["attention"] == before["attention"] == "XLA softmax (no fused kernel)"
    assert "SDPA" in cells["hf-eager", "finetune"]["attention"]
    assert kbert["step"].startswith("fit") and before["step"] == "train/predict_on_batch"
    # The timed steps reuse the program compiled during the warm-up.
    assert kbert["compilations_during_timing"] == 0
    # One table on stdout (and in $OUT), every worker's stderr kept.
    table = (tmp_path / "table.txt").read_text()
    assert table.strip() == completed.stdout.strip()
    assert "kbert-jax-before" in table and "attention" in table.splitlines()[0]
    log = (tmp_path / "workers.log").read_text()
    assert log.count("===== ") == len(cells)


def test_cells_follow_each_engines_workloads(benchmarks):
    from gpu_benchmark import cells, select

    engines, workloads = select("kbert-jax,kbert-jax+bf16,hf-compile")
    assert cells(engines, workloads) == [
        ("kbert-jax", "finetune"), ("kbert-jax", "inference"), ("kbert-jax", "pretraining"),
        ("kbert-jax", "inference_long"), ("hf-compile", "finetune"),
        ("hf-compile", "inference"), ("kbert-jax+bf16", "finetune"),
    ]


def test_attention_is_read_from_the_compiled_hlo(tmp_path, benchmarks):
    from attention_report import xla_attention

    assert xla_attention(tmp_path) == "unknown (no HLO dump)"
    (tmp_path / "module_0001.jit_step.gpu_after_optimizations.txt").write_text(
        'custom-call(...), custom_call_target="__cudnn$fmhaSoftmaxDropout", backend_config=x\n'
        'custom-call(...), custom_call_target="__cudnn$fmhaSoftmaxDropoutBackward"\n'
    )
    (tmp_path / "module_0001.jit_step.before_optimizations.txt").write_text(
        'custom_call_target="__cudnn$fmhaSoftmax"'  # not what ran: before optimisation
    )
    assert xla_attention(tmp_path) == (
        "cuDNN fused: __cudnn$fmhaSoftmaxDropout, __cudnn$fmhaSoftmaxDropoutBackward"
    )


@only_in_the_jax_pass
def test_a_failing_cell_is_recorded_not_fatal(benchmarks, tmp_path):
    from gpu_benchmark import cell_settings, run_cell

    settings = cell_settings(
        dict(size="tiny", batch_size=2, seq_length=8, long_seq_length=8, masked_positions=20,
             repeats=1, warmup=0, window=1),
        "pretraining",
    )
    # 20 masked positions do not fit in 8 tokens: the worker reports the error.
    log = tmp_path / "workers.log"
    record = run_cell("kbert-jax", "pretraining", settings, timeout=120, log=log)
    assert record["status"] == "error"
    assert "masked_positions" in record["error"]
    assert log.read_text().startswith("===== kbert-jax pretraining: exit status 0")


# --- Cold start and CPU fill-mask --------------------------------------------------------------


@pytest.fixture
def random_preset(benchmarks, tmp_path):
    from random_preset import write_random_preset

    return str(write_random_preset(tmp_path / "preset", "tiny", vocabulary_size=1000))


def test_made_up_vocabulary_has_the_size_asked_for(benchmarks):
    from random_preset import SPECIAL_TOKENS, made_up_vocabulary

    vocabulary = made_up_vocabulary(8000)
    assert len(vocabulary) == len(set(vocabulary)) == 8000
    assert tuple(vocabulary[: len(SPECIAL_TOKENS)]) == SPECIAL_TOKENS
    with pytest.raises(ValueError, match="vocabulary_size=10"):
        made_up_vocabulary(10)


@only_in_the_jax_pass
def test_app_phases_time_the_load_and_the_first_prediction(random_preset):
    from cold_start import DEFAULT_TEXT, app_phases

    phases = app_phases(random_preset, DEFAULT_TEXT)
    assert set(phases) == {
        "import_keras", "load", "first_call", "load_to_first_result", "second_call"
    }
    assert phases["load_to_first_result"] == pytest.approx(phases["load"] + phases["first_call"])
    assert all(seconds >= 0 for seconds in phases.values())


@pytest.mark.skipif(
    keras.config.backend() != "torch",
    reason="the script times whichever backend it runs on; the PyTorch pass (the shortest) runs it",
)
def test_app_phases_of_a_classifier_time_one_text_and_a_file_of_them(random_preset, tmp_path):
    from cold_start import CLASSIFY_TEXT, app_phases, classifier_and_texts

    # A preset without a classifier head gets one, trained a step so the CLI takes it.
    folder, texts_file = classifier_and_texts(random_preset, str(tmp_path / "classifier"), 7)
    from kbert.models import BertClassifier

    assert BertClassifier.from_preset(folder).freshly_initialized_heads == []
    with open(texts_file, encoding="utf-8") as handle:
        texts = handle.read().splitlines()
    assert len(texts) == 7 and all(12 <= len(text.split()) <= 41 for text in texts)
    phases = app_phases(folder, CLASSIFY_TEXT, "classify", texts)
    assert phases["texts"] > 0 and phases["first_call"] > 0
    assert phases["load_to_first_result"] == pytest.approx(phases["load"] + phases["first_call"])


def test_cold_start_refuses_a_file_of_texts_to_fill_mask(benchmarks):
    from cold_start import measure

    with pytest.raises(ValueError, match="task='classify'"):
        measure("demo", "a [MASK].", runs=1, task="fill-mask", texts=10)
    with pytest.raises(ValueError, match="`task` must be one of"):
        measure("demo", "a", runs=1, task="summarise")


@only_in_the_jax_pass
@pytest.mark.slow
def test_cold_start_times_the_kbert_command(random_preset):
    import os

    from cold_start import DEFAULT_TEXT, cli_seconds

    environment = dict(os.environ, KERAS_BACKEND="jax", JAX_COMPILATION_CACHE_DIR="")
    assert cli_seconds(random_preset, DEFAULT_TEXT, environment) > 0
    with pytest.raises(RuntimeError, match="no such folder"):
        cli_seconds(random_preset + "-missing", DEFAULT_TEXT, environment)


@only_in_the_jax_pass
@pytest.mark.slow
def test_cpu_fill_mask_compares_the_same_weights(benchmarks):
    from cpu_fill_mask import format_table, measure

    result = measure(size="tiny", vocabulary_size=1000, rounds=2, warmup=1, bfloat16=True)
    assert result["top5"]["kbert"][0] == result["top5"]["transformers"][0]
    for library in ("kbert", "transformers", "kbert-bfloat16"):
        assert result["milliseconds"][library]["runs"] == 2
        assert result["milliseconds"][library]["median"] > 0
    assert result["ratio"] * result["kbert_over_transformers"] == pytest.approx(1.0)
    # bfloat16 rounds the weights: close to float32, but not equal.
    assert 0 < result["bfloat16_probability_difference"] < 0.05
    table = format_table(result)
    assert "kbert / transformers" in table and "kbert-bfloat16" in table


@only_in_the_jax_pass
def test_cpu_inference_compares_kbert_with_onnx_runtime_and_transformers(benchmarks):
    pytest.importorskip("onnxruntime", reason="the ONNX Runtime engine is optional")
    pytest.importorskip("onnx", reason="torch.onnx.export writes through the onnx package")
    from cpu_inference import ENGINES, format_table, measure

    result = measure(size="tiny", vocabulary_size=1000, workloads=(1, 5), rounds=1, warmup=0)
    for count in ("1", "5"):
        figures = result["workloads"][count]
        # The same weights: the float32 engines' probabilities agree; int8 moves them.
        differences = figures["probability_difference"]
        assert max(differences[name] for name in ENGINES if "int8" not in name) < 1e-4
        assert all(0 <= differences[name] < 0.2 for name in ENGINES if "int8" in name)
        for engine in ENGINES:
            assert figures["milliseconds"][engine]["runs"] == 1
        ratio = figures["milliseconds"]["kbert"]["median"] / figures["milliseconds"]["onnxruntime"]["median"]
        assert figures["kbert_over_onnxruntime"] == pytest.approx(ratio)
    assert result["workloads"]["5"]["max_words"] <= 40
    assert "kbert-onnxruntime-int8" in format_table(result)
    assert result["engines"] == list(ENGINES)


def test_cpu_inference_always_times_the_reference_engines(benchmarks):
    from cpu_inference import chosen_engines

    assert chosen_engines(["kbert-keras-int8"]) == (
        "kbert", "onnxruntime", "transformers", "kbert-keras-int8"
    )
    assert chosen_engines([]) == ("kbert", "onnxruntime", "transformers")
    with pytest.raises(ValueError, match="unknown engines"):
        chosen_engines(["tensorrt"])


# --- Host work per step and the CPU design choices ------------------------------------------


@only_in_the_jax_pass
@pytest.mark.slow
def test_host_overhead_times_both_ways_of_stepping(benchmarks):
    from host_overhead import measure

    result = measure(rounds=1, steps=2, num_layers=2)
    assert set(result["ms_per_step"]) == {"train_on_batch", "fit"}
    assert all(value > 0 for value in result["ms_per_step"].values())
    # Weights and AdamW's two moments of every trainable variable, at least.
    assert result["state_arrays"] >= 3 * 2 * 12


@only_in_the_jax_pass
@pytest.mark.slow
def test_cpu_optimisations_time_each_choice_against_its_alternative(benchmarks):
    from cpu_optimisations import COMPARISONS, format_table, measure

    result = measure(size="tiny", batch_size=2, length=16, rounds=1, warmup=1)
    for name in COMPARISONS:
        figures = result[name]
        assert figures["kbert"]["median"] > 0 and figures["alternative"]["median"] > 0
        assert figures["ratio"] == pytest.approx(
            figures["alternative"]["median"] / figures["kbert"]["median"]
        )
        assert name in format_table(result)
    with pytest.raises(ValueError, match="Unknown comparisons"):
        measure(only=("flash",))


@only_in_the_jax_pass
def test_int8_published_scores_every_engine_on_the_same_texts(benchmarks, tmp_path, monkeypatch):
    from int8_published import ENGINES, format_table, scores

    from kbert.models import BertClassifier

    monkeypatch.setenv("KBERT_CACHE", str(tmp_path / "cache"))
    model = BertClassifier.from_preset("demo-spam")
    texts = ["Sorry, I'll call you later.", "WINNER! Claim your £900 prize: call 09061701461 now",
             "Ok lar, see you at home", "FREE entry: text WIN to 80086 to win a car"]
    found = scores(model, texts, ["ham", "spam", "ham", "spam"])
    assert set(found) == set(ENGINES)
    assert found["keras"]["agreement"] == 1.0 and found["keras"]["largest_probability_change"] == 0
    assert found["onnxruntime"]["largest_probability_change"] < 1e-4  # the same float32 model
    for name in ("onnxruntime-int8", "keras-int8"):
        assert 0 < found[name]["largest_probability_change"] < 0.2  # quantized: close, not equal
    for result in found.values():
        assert 0 <= result["accuracy"] <= 1 and 0 <= result["macro_f1"] <= 1
    seconds = {"1 message": {name: {"median": 0.01} for name in ENGINES}}
    table = format_table({"model": "demo-spam", "messages": 4, "rounds": 1,
                          "scores": found, "seconds": seconds})
    assert table.count("\n| ") == len(ENGINES) + 2  # the header, its rule, a row per engine
