"""kbert's ONNX export at BERT-base: its time and memory, and ONNX Runtime on the graph it writes.

Three measurements, on one random-weight `BertClassifier` (BERT-base sizes, 2 labels;
or the model of `--preset`, any model source):

- export: the seconds of `kbert.inference.onnx_export.export_graph`, the resident
  memory the process holds before it, the most it holds during it (the kernel's
  high-water mark, reset just before the export), their difference against the
  model's float32 weight bytes, and the whole process's peak; with `--command`, the
  wall time and peak memory of `kbert export SRC DST --format onnx` in a new process;
- `--compare-graph OLD.onnx` (a graph of the same weights written another way, e.g. by
  an earlier kbert): ONNX Runtime on both graphs in interleaved rounds, one sentence
  (14 tokens; 10 calls in a row per round, the figure per call) and 64 sentences of 14-42 tokens sorted by length in batches of 8, each
  padded to its longest (what kbert's ONNX Runtime engine feeds), all graph
  optimizations, each round starting with the next session; and the largest difference of their logits;
- `--int8`: the graph quantized as `quantize="int8"` does (ONNX Runtime's
  `quantize_dynamic`), its timing in the same rounds and the largest difference of its
  label probabilities from the float32 graph's.

Usage:
    python benchmarks/onnx_export_time.py
    python benchmarks/onnx_export_time.py --preset model_folder --compare-graph old.onnx --int8

kbert runs on JAX unless KERAS_BACKEND says otherwise.
"""

import argparse
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from timing import interleaved_timings, summarize  # noqa: E402

BATCH_SIZE = 8
SINGLE_CALLS = 10


def _status_mib(field):
    """`field` of /proc/self/status ("VmRSS", "VmHWM") in MiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise ValueError(f"/proc/self/status has no {field}")


def _reset_high_water_mark():
    """From now on VmHWM is the most held from here (Linux: `clear_refs` 5)."""
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


def base_classifier(preset=None):
    from kbert.architecture.bert_config import BERT_SIZES
    from kbert.models import BertBackbone
    from kbert.models import BertClassifier
    from kbert.models import BertTask

    if preset is not None:
        return BertTask.from_preset(preset, dtype="float32")
    layers, hidden = BERT_SIZES["base"]
    backbone = BertBackbone(num_layers=layers, hidden_size=hidden, num_heads=hidden // 64,
                            intermediate_size=4 * hidden, vocabulary_size=30522, dtype="float32")
    return BertClassifier(backbone, num_classes=2)


def measure_export(model, path):
    from kbert.inference.onnx_export import export_graph

    weight_mib = sum(4 * math.prod(variable.shape) for variable in model.weights) / 2**20
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    _reset_high_water_mark()
    before = _status_mib("VmRSS")
    start = time.perf_counter()
    export_graph(model, path)
    seconds = time.perf_counter() - start
    # What the export started with it held: the kernel's high-water mark misses pages
    # touched and released between its updates, and read 0.1 MiB below `before` once.
    during = max(_status_mib("VmHWM"), before)
    return {
        "seconds": seconds,
        "weights_mib": weight_mib,
        "rss_before_mib": before,
        "rss_peak_during_mib": during,
        "increase_over_weights": (during - before) / weight_mib,
        "process_peak_mib": max(peak_before, during),
        "graph_mib": os.path.getsize(path) / 2**20,
    }


def measure_command(preset, destination):
    """Wall seconds and peak memory of `kbert export PRESET DESTINATION --format onnx`,
    the whole process (imports, loading the model, writing the folder)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kbert.cli", "export", str(preset), str(destination),
                    "--format", "onnx"], check=True, capture_output=True)
    return {"seconds": time.perf_counter() - start,
            "peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def workloads(vocabulary_size, seed=0):
    """{1: [one batch], 64: [8 batches]}: int32 feeds of sentences sorted by length."""
    rng = np.random.default_rng(seed)
    result = {}
    for count, lengths in ((1, [14]), (64, rng.integers(14, 43, size=64))):
        lengths = sorted(int(length) for length in lengths)
        batches = []
        for start in range(0, count, BATCH_SIZE):
            rows = lengths[start : start + BATCH_SIZE]
            longest = max(rows)
            mask = (np.arange(longest)[None, :] < np.array(rows)[:, None]).astype(np.int32)
            ids = rng.integers(5, vocabulary_size, size=mask.shape).astype(np.int32) * mask
            batches.append({"token_ids": ids, "segment_ids": np.zeros_like(ids),
                            "padding_mask": mask})
        result[count] = batches
    return result


def session(path):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def compare_sessions(sessions, feeds, rounds):
    """Per workload: medians (ms) per session, interleaved, and logits differences."""
    def runner(running, batches, calls):
        return lambda: [running.run(None, batch) for _ in range(calls) for batch in batches]

    result = {}
    for count, batches in feeds.items():
        outputs = {name: np.concatenate([running.run(None, batch)[0] for batch in batches])
                   for name, running in sessions.items()}
        reference = outputs["new"]
        probabilities = {name: _softmax(value) for name, value in outputs.items()}
        # One sentence is timed as `SINGLE_CALLS` calls in a row: ONNX Runtime's threads
        # spin for a while after a run, which slows whichever session runs next; and
        # each round starts with another session (`rotated_timings`).
        calls = SINGLE_CALLS if count == 1 else 1
        seconds = rotated_timings(
            {name: runner(running, batches, calls) for name, running in sessions.items()},
            rounds=rounds)
        result[count] = {
            "ms": {name: 1000 * summarize(values)["median"] / calls
                   for name, values in seconds.items()},
            "min_ms": {name: 1000 * summarize(values)["min"] / calls
                       for name, values in seconds.items()},
            "max_logit_diff": {name: float(np.abs(value - reference).max())
                               for name, value in outputs.items()},
            "max_probability_diff": {name: float(np.abs(value - probabilities["new"]).max())
                                     for name, value in probabilities.items()},
        }
    return result


def rotated_timings(functions, rounds, warmup=2):
    """`timing.interleaved_timings`, each round starting one function later than the last,
    so that no function always runs right after the same one."""
    names = list(functions)
    seconds = {name: [] for name in names}
    for turn in range(warmup + rounds):
        order = names[turn % len(names):] + names[:turn % len(names)]
        timed = interleaved_timings({name: functions[name] for name in order}, rounds=1,
                                    warmup=0)
        if turn >= warmup:
            for name in names:
                seconds[name] += timed[name]
    return seconds


def _softmax(logits):
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def quantized(path, destination):
    import onnx
    from onnxruntime.quantization import QuantType
    from onnxruntime.quantization import quantize_dynamic

    quantize_dynamic(onnx.load(str(path)), str(destination), weight_type=QuantType.QInt8)
    return destination


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", help="the model to export (default: random BERT-base)")
    parser.add_argument("--compare-graph", help="another ONNX graph of the same weights")
    parser.add_argument("--int8", action="store_true", help="also the int8 graph")
    parser.add_argument("--command", action="store_true",
                        help="also time `kbert export --format onnx` in a new process")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    import keras

    model = base_classifier(args.preset)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.onnx")
        export = measure_export(model, path)
        print(f"backend {keras.config.backend()}, export of {export['weights_mib']:.0f} MiB "
              f"of weights: {export['seconds']:.2f} s; RSS {export['rss_before_mib']:.0f} MiB "
              f"before, at most {export['rss_peak_during_mib']:.0f} MiB during "
              f"({export['increase_over_weights']:.2f}x the weights more); process peak "
              f"{export['process_peak_mib']:.0f} MiB; graph {export['graph_mib']:.0f} MiB")
        if args.command:
            preset = args.preset
            if preset is None:
                preset = os.path.join(folder, "preset")
                model.save_to_preset(preset)
            command = measure_command(preset, os.path.join(folder, "exported"))
            export["command"] = command
            print(f"kbert export --format onnx, whole process: {command['seconds']:.1f} s, "
                  f"peak {command['peak_mib']:.0f} MiB")
        if not (args.compare_graph or args.int8):
            return export
        sessions = {"new": session(path)}
        if args.compare_graph:
            sessions["compared"] = session(args.compare_graph)
        if args.int8:
            sessions["new-int8"] = session(quantized(path, os.path.join(folder, "int8.onnx")))
        result = compare_sessions(sessions, workloads(model.bert_config.vocabulary_size),
                                  args.rounds)
        for count, figures in result.items():
            print(f"{count} sentence(s), median ms of {args.rounds} interleaved rounds: "
                  + ", ".join(f"{name} {ms:.1f} (min {figures['min_ms'][name]:.1f})"
                              for name, ms in figures["ms"].items())
                  + "; largest logit difference from 'new': "
                  + ", ".join(f"{name} {diff:.1e}"
                              for name, diff in figures["max_logit_diff"].items()
                              if name != "new")
                  + "; probability: "
                  + ", ".join(f"{name} {diff:.1e}"
                              for name, diff in figures["max_probability_diff"].items()
                              if name != "new"))
        return {"export": export, "onnxruntime": result}


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
