"""kbert against Hugging Face transformers and keras-hub on one device, in one run.

Engines (each workload of each engine runs in a fresh process of this script, so that
every engine has the device to itself, Keras can pick its backend at import, the peak
memory is that workload's own, and a crash or a timeout costs one cell, not the run):

    kbert-jax, kbert-tensorflow, kbert-torch   kbert on each Keras backend (XLA on JAX
                                               and TensorFlow, eager on PyTorch)
    hf-eager, hf-compile                       transformers' BERT, sdpa attention, bf16
                                               autocast, fused AdamW; eager / torch.compile
    keras-hub-jax                              keras-hub's BertBackbone on JAX

Workloads, at `--size` (default BERT-base) with a batch of `--batch-size` sequences:

    finetune        classifier training step (AdamW), `--seq-length` tokens
    inference       classifier forward pass, `--seq-length` tokens
    pretraining     masked-LM + next-sentence training step, `--masked-positions`
                    predictions per sequence
    inference_long  classifier forward pass, `--long-seq-length` tokens

Each cell reports the median step time over `--repeats` steps after `--warmup` untimed
steps, sequences per second, model-FLOPs utilisation (see `model_flops.py`) against
the bf16 matrix-multiply rate measured in the same run (`peak_matmul.py`), the peak
device memory and the precision used. Failures are recorded in the JSON, never fatal.

Usage:
    python benchmarks/gpu_benchmark.py --output results.json          # on a GPU
    python benchmarks/gpu_benchmark.py --smoke --only kbert-jax       # CPU, seconds
"""

import argparse
import importlib.metadata
import importlib.util
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from model_flops import WORKLOADS, model_flops

# Published BERT sizes, as `kbert.models.bert_config.BERT_SIZES`: name -> (layers,
# hidden size). Not imported from kbert because that loads Keras, which this driver
# leaves to its workers (one backend per process).
BERT_SIZES = {
    "tiny": (2, 128),
    "mini": (4, 256),
    "small": (4, 512),
    "medium": (8, 512),
    "base": (12, 768),
    "large": (24, 1024),
}
VOCABULARY_SIZE = 30522  # BERT's uncased English vocabulary.

# engine -> (Keras backend of its process, modules it needs), most important first.
ENGINES = {
    "kbert-jax": ("jax", ("keras", "jax")),
    "hf-eager": (None, ("torch", "transformers")),
    "hf-compile": (None, ("torch", "transformers")),
    "keras-hub-jax": ("jax", ("keras", "keras_hub", "jax")),
    "kbert-torch": ("torch", ("keras", "torch")),
    "kbert-tensorflow": ("tensorflow", ("keras", "tensorflow")),
}
# Matrix-multiply peaks, one per framework that has a GPU kernel library of its own.
PEAK_ENGINES = {"peak-torch": "torch", "peak-jax": "jax"}
PEAK_FOR_ENGINE = {
    "kbert-jax": "peak-jax",
    "keras-hub-jax": "peak-jax",
    "hf-eager": "peak-torch",
    "hf-compile": "peak-torch",
    "kbert-torch": "peak-torch",
    "kbert-tensorflow": "peak-torch",
}

DEFAULTS = dict(
    size="base",
    batch_size=256,
    seq_length=128,
    long_seq_length=512,
    masked_positions=20,
    repeats=10,
    warmup=3,
)
SMOKE = dict(
    size="tiny",
    batch_size=4,
    seq_length=32,
    long_seq_length=64,
    masked_positions=5,
    repeats=2,
    warmup=1,
)


# --- Selection ----------------------------------------------------------------------------


def select(only):
    """The engines and workloads named in `only` (comma-separated); all of a kind when
    `only` names none of it.

    Example:

    >>> select("kbert-jax,finetune")
    (['kbert-jax'], ['finetune'])
    """
    names = [name.strip() for name in (only or "").split(",") if name.strip()]
    unknown = [name for name in names if name not in ENGINES and name not in WORKLOADS]
    if unknown:
        raise ValueError(
            f"`--only` names unknown engines or workloads {unknown}. Engines: "
            f"{list(ENGINES)}; workloads: {list(WORKLOADS)}. Received: --only={only!r}"
        )
    engines = [name for name in ENGINES if name in names] or list(ENGINES)
    workloads = [name for name in WORKLOADS if name in names] or list(WORKLOADS)
    return engines, workloads


def missing_modules(modules):
    """The modules of `modules` that are not installed (found without importing them)."""
    return [module for module in modules if importlib.util.find_spec(module) is None]


def cell_settings(options, workload, seed=0, allow_cpu=True):
    """The settings a worker needs for `workload`: model sizes, batch shape, repeats,
    and whether it may run on a CPU (else it stops at once when it finds no GPU)."""
    num_layers, hidden_size = BERT_SIZES[options["size"]]
    return {
        "allow_cpu": allow_cpu,
        "size": options["size"],
        "num_layers": num_layers,
        "hidden_size": hidden_size,
        "num_heads": hidden_size // 64,
        "intermediate_size": 4 * hidden_size,
        "vocabulary_size": VOCABULARY_SIZE,
        "batch_size": options["batch_size"],
        "seq_length": (
            options["long_seq_length"] if workload == "inference_long" else options["seq_length"]
        ),
        "masked_positions": options["masked_positions"],
        "repeats": options["repeats"],
        "warmup": options["warmup"],
        "seed": seed,
    }


# --- Workers -------------------------------------------------------------------------------


def _framework(engine):
    if engine in PEAK_ENGINES:
        return PEAK_ENGINES[engine]
    return ENGINES[engine][0] or "torch"


def run_worker(engine, workload, settings):
    """Runs one cell in this process; returns its measurements or its error."""
    try:
        if not settings["allow_cpu"]:
            from device_facts import uses_accelerator

            if not uses_accelerator(_framework(engine)):
                raise RuntimeError(
                    f"{_framework(engine)} sees no GPU, and a full-size run on a CPU would "
                    "only time out; use --smoke, or --allow-cpu to run it anyway"
                )
        if engine in PEAK_ENGINES:
            import peak_matmul

            return {"status": "ok", **peak_matmul.run(PEAK_ENGINES[engine], settings)}
        from benchmark_data import random_batch

        batch = random_batch(
            settings["batch_size"],
            settings["seq_length"],
            settings["vocabulary_size"],
            settings["masked_positions"],
            seed=settings["seed"],
        )
        if engine.startswith("hf-"):
            import huggingface_engines as engines
        else:
            import keras_engines as engines
        return {"status": "ok", **engines.run(engine, workload, settings, batch)}
    except Exception as error:  # Recorded in the results; the run goes on.
        return {"status": "error", "error": f"{type(error).__name__}: {error}"[:2000]}


def run_cell(engine, workload, settings, timeout):
    """Runs one cell in a fresh process of this script; returns its result record."""
    backend = ENGINES.get(engine, (None,))[0]
    environment = dict(os.environ)
    environment.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    # TensorFlow, when some library imports it, must not reserve the whole GPU.
    environment.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    if backend is not None:
        environment["KERAS_BACKEND"] = backend
    with tempfile.TemporaryDirectory(prefix="kbert-benchmark-") as scratch:
        result_file = os.path.join(scratch, "result.json")
        command = [
            sys.executable,
            os.path.abspath(__file__),
            "--worker",
            engine,
            workload,
            "--settings",
            json.dumps(settings),
            "--result-file",
            result_file,
        ]
        # A session of its own, so that a timeout also ends the worker's children
        # (torch.compile's compiler processes).
        worker = subprocess.Popen(
            command,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            _, stderr = worker.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _end_process_group(worker)
            return {"status": "error", "error": f"timed out after {timeout} s"}
        if os.path.exists(result_file):
            with open(result_file, encoding="utf-8") as file:
                return json.load(file)
        return {
            "status": "error",
            "error": f"worker exited with status {worker.returncode}: {stderr.strip()[-2000:]}",
        }


def _end_process_group(worker):
    if hasattr(os, "killpg"):
        os.killpg(worker.pid, signal.SIGKILL)
    else:
        worker.kill()
    worker.communicate()


# --- Figures -------------------------------------------------------------------------------


def add_figures(record, peaks):
    """Adds median step time, sequences/s, model FLOPs and utilisation to a cell."""
    if record["status"] != "ok":
        return record
    settings = record["settings"]
    median = statistics.median(record["seconds"])
    record["median_seconds"] = median
    if record["workload"] == "peak":
        record["flops_per_second"] = record["flops"] / median
        return record
    record["sequences_per_second"] = settings["batch_size"] / median
    flops = model_flops(
        record["workload"],
        settings["num_layers"],
        settings["hidden_size"],
        settings["intermediate_size"],
        settings["vocabulary_size"],
        settings["batch_size"],
        settings["seq_length"],
        masked_positions=settings["masked_positions"],
    )
    record["model_flops"] = flops
    record["model_flops_per_second"] = flops / median
    peak = max(peaks.values()) if peaks else None
    record["mfu"] = None if peak is None else flops / median / peak
    return record


def format_table(records):
    """The results as a fixed-width text table."""
    header = (
        f"{'engine':<17}{'workload':<15}{'seq/s':>10}{'ms/step':>10}{'MFU':>7}"
        f"{'peak GiB':>10}  {'precision':<15}note"
    )
    lines = [header, "-" * len(header)]
    for record in records:
        if record["workload"] == "peak":
            if record["status"] == "ok":
                note = (
                    f"{record['matmul_size']}^2 {record['precision']} matmul: "
                    f"{record['flops_per_second'] / 1e12:.3g} TFLOP/s on {record['device']}"
                )
            else:
                note = record.get("error", record["status"])
            lines.append(f"{record['engine']:<17}{'peak':<15}{'':>37}  {'':<15}{note}")
            continue
        if record["status"] != "ok":
            note = record.get("error") or record.get("reason", "")
            lines.append(
                f"{record['engine']:<17}{record['workload']:<15}{'-':>10}{'-':>10}{'-':>7}"
                f"{'-':>10}  {'':<15}{record['status']}: {note[:120]}"
            )
            continue
        memory = record.get("peak_memory_bytes")
        memory = "n/a" if memory is None else f"{memory / 2**30:.2f}"
        mfu = "n/a" if record.get("mfu") is None else f"{100 * record['mfu']:.1f}%"
        lines.append(
            f"{record['engine']:<17}{record['workload']:<15}"
            f"{record['sequences_per_second']:>10.1f}{1000 * record['median_seconds']:>10.2f}"
            f"{mfu:>7}{memory:>10}  {record['precision']:<15}{record['compiled']}"
        )
    return "\n".join(lines)


def package_versions():
    versions = {"python": platform.python_version()}
    for package in ("kbert", "keras", "jax", "jaxlib", "torch", "tensorflow", "transformers",
                    "keras-hub"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    return versions


# --- Driver --------------------------------------------------------------------------------


def run_benchmark(options, engines, workloads, cell_timeout, time_budget, allow_cpu):
    """Runs every selected cell, peaks first; returns the list of result records.

    Progress goes to stderr, one line per cell.
    """
    started = time.monotonic()
    peak_names = []
    for engine in engines:
        peak = PEAK_FOR_ENGINE[engine]
        if peak not in peak_names:
            peak_names.append(peak)
    # Engine by engine, in `ENGINES` order (the comparisons that matter most first), so
    # that a run cut short by the time budget loses whole engines, not whole workloads.
    cells = [(name, "peak") for name in peak_names]
    cells += [(engine, workload) for engine in engines for workload in workloads]
    records, peaks = [], {}
    for engine, workload in cells:
        settings = cell_settings(
            options, "finetune" if workload == "peak" else workload, allow_cpu=allow_cpu
        )
        record = {"engine": engine, "workload": workload, "settings": settings}
        missing = missing_modules(
            (PEAK_ENGINES[engine],) if engine in PEAK_ENGINES else ENGINES[engine][1]
        )
        elapsed = time.monotonic() - started
        if missing:
            record.update(status="skipped", reason=f"not installed: {', '.join(missing)}")
        elif elapsed > time_budget:
            record.update(
                status="skipped", reason=f"time budget of {time_budget} s used up"
            )
        elif workload != "peak" and not peaks and not allow_cpu:
            record.update(status="skipped", reason="no GPU: every peak-matmul cell failed")
        else:
            print(f"[{elapsed:6.0f} s] {engine} {workload} ...", file=sys.stderr, flush=True)
            record.update(run_cell(engine, workload, settings, cell_timeout))
        add_figures(record, peaks)
        if workload == "peak" and record["status"] == "ok":
            peaks[engine] = record["flops_per_second"]
        records.append(record)
    return records


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[2:]),
    )
    parser.add_argument("--size", choices=sorted(BERT_SIZES), help="BERT size (default: base)")
    parser.add_argument("--batch-size", type=int, help="sequences per step (default: 256)")
    parser.add_argument("--seq-length", type=int, help="tokens per sequence (default: 128)")
    parser.add_argument(
        "--long-seq-length", type=int, help="tokens per sequence of inference_long (default: 512)"
    )
    parser.add_argument(
        "--masked-positions", type=int, help="masked-LM predictions per sequence (default: 20)"
    )
    parser.add_argument("--repeats", type=int, help="timed steps per cell (default: 10)")
    parser.add_argument("--warmup", type=int, help="untimed steps first (default: 3)")
    parser.add_argument(
        "--only", help=f"comma-separated engines and/or workloads: {list(ENGINES)}, {WORKLOADS}"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="BERT-tiny, batch 4, seq 32 (64 long), 2 repeats: runs on a CPU in seconds",
    )
    parser.add_argument(
        "--allow-cpu",
        action="store_true",
        help="run full-size cells on a CPU too (by default only --smoke runs without a GPU)",
    )
    # The defaults keep a whole run under ten minutes: no cell starts after 6 minutes,
    # and none runs longer than 3.
    parser.add_argument(
        "--cell-timeout", type=int, default=180, help="seconds per cell (default: 180)"
    )
    parser.add_argument(
        "--time-budget",
        type=int,
        default=360,
        help="start no cell after this many seconds; later cells are recorded as skipped "
        "(default: 360)",
    )
    parser.add_argument("--output", help="write the results to this JSON file")
    parser.add_argument("--worker", nargs=2, metavar=("ENGINE", "WORKLOAD"), help=argparse.SUPPRESS)
    parser.add_argument("--settings", help=argparse.SUPPRESS)
    parser.add_argument("--result-file", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        engine, workload = args.worker
        result = run_worker(engine, workload, json.loads(args.settings))
        with open(args.result_file, "w", encoding="utf-8") as file:
            json.dump(result, file)
        return 0

    options = dict(SMOKE if args.smoke else DEFAULTS)
    for name in options:
        value = getattr(args, name)
        if value is not None:
            options[name] = value
    for name in ("batch_size", "seq_length", "long_seq_length", "masked_positions", "repeats"):
        if options[name] < 1:
            parser.error(f"--{name.replace('_', '-')} must be positive. Received: {options[name]}")
    try:
        engines, workloads = select(args.only)
    except ValueError as error:
        parser.error(str(error))
    records = run_benchmark(
        options,
        engines,
        workloads,
        args.cell_timeout,
        args.time_budget,
        allow_cpu=args.smoke or args.allow_cpu,
    )
    print(format_table(records))
    if args.output:
        document = {
            "options": options,
            "smoke": args.smoke,
            "versions": package_versions(),
            "results": records,
        }
        with open(args.output, "w", encoding="utf-8") as file:
            json.dump(document, file, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
