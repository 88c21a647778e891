"""kbert against Hugging Face transformers and keras-hub on one device, in one run.

Engines (each workload of each engine runs in a fresh process of this script, so that
every engine has the device to itself, Keras can pick its backend at import, the peak
memory is that workload's own, and a crash or a timeout costs one cell, not the run):

    kbert-jax                  kbert as shipped: precision "auto" (bf16 on a GPU), the
                               attention dispatch (cuDNN fused attention), Keras' fit loop
    kbert-jax-before           kbert before this benchmark's optimisations: float32,
                               Keras' masked attention (XLA softmax), train_on_batch
    kbert-jax+bf16             ... plus bf16 (attention still XLA's)
    kbert-jax+bf16+cudnn       ... plus cuDNN attention (still train_on_batch)
    hf-eager, hf-compile       transformers' BERT, sdpa attention, bf16 autocast, fused
                               AdamW; eager / torch.compile
    keras-hub-jax              keras-hub's BertBackbone on JAX, bf16, fit loop
    kbert-torch, kbert-tensorflow  kbert on the other Keras backends (eager PyTorch, XLA)

The three "kbert-jax-*" variants run the fine-tuning step only: each adds one
optimisation to the one before, so that their differences attribute the speed-up.

Workloads, at `--size` (default BERT-base) with a batch of `--batch-size` sequences:

    finetune        classifier training step (AdamW), `--seq-length` tokens
    inference       classifier forward pass, `--seq-length` tokens
    pretraining     masked-LM + next-sentence training step, `--masked-positions`
                    predictions per sequence
    inference_long  classifier forward pass, `--long-seq-length` tokens

Each cell reports the median step time over `--repeats` windows of `--window` steps
(one step per window for the *_on_batch variants) after `--warmup` untimed windows,
sequences per second, model-FLOPs utilisation (see `model_flops.py`) against the bf16
matrix-multiply rate measured in the same run (`peak_matmul.py`), the peak device
memory, the precision and the attention implementation the cell really ran
(`attention_report.py`: from the optimised HLO XLA compiled, or PyTorch's profile).
Failures are recorded in the JSON, never fatal; every worker's stderr goes to
`--log`. No cell starts after `--time-budget` seconds, and none runs past it.

Usage:
    python benchmarks/gpu_benchmark.py --output results.json          # on a GPU
    python benchmarks/gpu_benchmark.py --smoke --only kbert-jax       # CPU, seconds
    bash benchmarks/device_run.sh                                     # the GPU run
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

from attention_report import XLA_DUMP_FLAGS, xla_attention
from model_flops import WORKLOADS, model_flops

# Published BERT sizes, as `kbert.architecture.bert_config.BERT_SIZES`: name -> (layers,
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

_ALL = WORKLOADS
_TRAINING_AND_INFERENCE = ("finetune", "inference")
# engine -> (Keras backend of its process, modules it needs, workloads it runs), most
# important first: a run cut short by its time budget loses the last cells.
ENGINES = {
    "kbert-jax": ("jax", ("keras", "jax"), _ALL),
    "hf-eager": (None, ("torch", "transformers"), _ALL),
    "hf-compile": (None, ("torch", "transformers"), _TRAINING_AND_INFERENCE),
    "keras-hub-jax": ("jax", ("keras", "keras_hub", "jax"), _TRAINING_AND_INFERENCE),
    "kbert-jax-before": ("jax", ("keras", "jax"), ("finetune",)),
    "kbert-jax+bf16": ("jax", ("keras", "jax"), ("finetune",)),
    "kbert-jax+bf16+cudnn": ("jax", ("keras", "jax"), ("finetune",)),
    "kbert-torch": ("torch", ("keras", "torch"), _TRAINING_AND_INFERENCE),
    "kbert-tensorflow": ("tensorflow", ("keras", "tensorflow"), _TRAINING_AND_INFERENCE),
}
# Backends whose programs XLA compiles (their HLO tells the attention kernel).
XLA_BACKENDS = ("jax", "tensorflow")
# Matrix-multiply peaks, one per framework that has a GPU kernel library of its own.
PEAK_ENGINES = {"peak-torch": "torch", "peak-jax": "jax"}
PEAK_FOR_ENGINE = {
    "kbert-jax": "peak-jax",
    "kbert-jax-before": "peak-jax",
    "kbert-jax+bf16": "peak-jax",
    "kbert-jax+bf16+cudnn": "peak-jax",
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
    repeats=5,
    warmup=2,
    window=4,
)
SMOKE = dict(
    size="tiny",
    batch_size=4,
    seq_length=32,
    long_seq_length=64,
    masked_positions=5,
    repeats=2,
    warmup=1,
    window=2,
)


# --- Selection ----------------------------------------------------------------------------


def select(only):
    """The engines and workloads named in `only` (comma-separated); all of a kind when
    `only` names none of it.

    Example:

    >>> select("kbert-jax,finetune")
    (['kbert-jax'], ['finetune'])

    Each engine runs only its own workloads of these (see `cells`).
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
        "window": options["window"],
        "seed": seed,
    }


def cells(engines, workloads):
    """The (engine, workload) cells to run, in priority order: each engine's own
    workloads among `workloads`."""
    return [
        (engine, workload)
        for engine in engines
        for workload in workloads
        if workload in ENGINES[engine][2]
    ]


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


def run_cell(engine, workload, settings, timeout, log=None):
    """Runs one cell in a fresh process of this script; returns its result record.

    The worker's stderr is appended to the file `log` (if given) under a header line;
    for XLA backends the attention kernel is read from the HLO the worker compiled.
    """
    backend = ENGINES.get(engine, (None,))[0]
    environment = dict(os.environ)
    environment.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    # TensorFlow, when some library imports it, must not reserve the whole GPU.
    environment.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    if backend is not None:
        environment["KERAS_BACKEND"] = backend
    with tempfile.TemporaryDirectory(prefix="kbert-benchmark-") as scratch:
        hlo_folder = os.path.join(scratch, "hlo")
        if backend in XLA_BACKENDS:
            environment["XLA_FLAGS"] = (
                environment.get("XLA_FLAGS", "") + " " + XLA_DUMP_FLAGS.format(folder=hlo_folder)
            ).strip()
        record = _run_worker_process(engine, workload, settings, timeout, environment,
                                     scratch, log)
        if backend in XLA_BACKENDS and record.get("status") == "ok":
            record["attention"] = xla_attention(hlo_folder)
        return record


def _run_worker_process(engine, workload, settings, timeout, environment, scratch, log):
    """Starts the worker, waits for it (killing it at `timeout`), reads its result."""
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
        stderr = _end_process_group(worker)
        _keep_log(log, engine, workload, f"timed out after {timeout:.0f} s", stderr)
        return {"status": "error", "error": f"timed out after {timeout:.0f} s"}
    _keep_log(log, engine, workload, f"exit status {worker.returncode}", stderr)
    if os.path.exists(result_file):
        with open(result_file, encoding="utf-8") as file:
            return json.load(file)
    return {
        "status": "error",
        "error": f"worker exited with status {worker.returncode}: {stderr.strip()[-2000:]}",
    }


def _end_process_group(worker):
    """Kills the worker and its children; returns what it wrote to stderr."""
    if hasattr(os, "killpg"):
        os.killpg(worker.pid, signal.SIGKILL)
    else:
        worker.kill()
    return worker.communicate()[1] or ""


def _keep_log(log, engine, workload, outcome, stderr):
    if log is None:
        return
    with open(log, "a", encoding="utf-8") as file:
        file.write(f"===== {engine} {workload}: {outcome}\n{stderr}\n")


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
        f"{'engine':<22}{'workload':<15}{'seq/s':>10}{'ms/step':>10}{'MFU':>7}"
        f"{'peak GiB':>10}  {'precision':<15}{'attention':<42}step"
    )
    lines = [header, "-" * len(header)]
    for record in records:
        name = f"{record['engine']:<22}"
        if record["workload"] == "peak":
            if record["status"] == "ok":
                note = (
                    f"{record['matmul_size']}^2 {record['precision']} matmul: "
                    f"{record['flops_per_second'] / 1e12:.3g} TFLOP/s on {record['device']}"
                )
            else:
                note = record.get("error", record["status"])
            lines.append(f"{name}{'peak':<15}{'':>37}  {note}")
            continue
        if record["status"] != "ok":
            note = record.get("error") or record.get("reason", "")
            lines.append(
                f"{name}{record['workload']:<15}{'-':>10}{'-':>10}{'-':>7}"
                f"{'-':>10}  {record['status']}: {note[:150]}"
            )
            continue
        memory = record.get("peak_memory_bytes")
        memory = "n/a" if memory is None else f"{memory / 2**30:.2f}"
        mfu = "n/a" if record.get("mfu") is None else f"{100 * record['mfu']:.1f}%"
        attention = record.get("attention") or "n/a"
        lines.append(
            f"{name}{record['workload']:<15}"
            f"{record['sequences_per_second']:>10.1f}{1000 * record['median_seconds']:>10.2f}"
            f"{mfu:>7}{memory:>10}  {record['precision']:<15}{attention[:41]:<42}"
            f"{record.get('step', '')}, {record['compiled']}"
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


def run_benchmark(options, engines, workloads, cell_timeout, time_budget, allow_cpu,
                  log=None, minimum_cell_seconds=20):
    """Runs every selected cell, peaks first; returns the list of result records.

    No cell starts with less than `minimum_cell_seconds` of `time_budget` left, and each
    runs for at most what is left (and `cell_timeout`), so the whole run ends within
    `time_budget` seconds plus a few of the driver's own. Progress goes to stderr, one
    line per cell; worker stderr to the file `log`.
    """
    started = time.monotonic()
    peak_names = []
    for engine in engines:
        peak = PEAK_FOR_ENGINE[engine]
        if peak not in peak_names:
            peak_names.append(peak)
    # In `ENGINES` order, the comparisons that matter most first, so that a run cut
    # short by the time budget loses the least important cells.
    plan = [(name, "peak") for name in peak_names] + cells(engines, workloads)
    records, peaks = [], {}
    for engine, workload in plan:
        settings = cell_settings(
            options, "finetune" if workload == "peak" else workload, allow_cpu=allow_cpu
        )
        record = {"engine": engine, "workload": workload, "settings": settings}
        missing = missing_modules(
            (PEAK_ENGINES[engine],) if engine in PEAK_ENGINES else ENGINES[engine][1]
        )
        elapsed = time.monotonic() - started
        left = time_budget - elapsed
        if missing:
            record.update(status="skipped", reason=f"not installed: {', '.join(missing)}")
        elif left < minimum_cell_seconds:
            record.update(
                status="skipped", reason=f"time budget of {time_budget} s used up"
            )
        elif workload != "peak" and not peaks and not allow_cpu:
            record.update(status="skipped", reason="no GPU: every peak-matmul cell failed")
        else:
            print(f"[{elapsed:6.0f} s] {engine} {workload} ...", file=sys.stderr, flush=True)
            record.update(run_cell(engine, workload, settings, min(cell_timeout, left), log))
        add_figures(record, peaks)
        if workload == "peak" and record["status"] == "ok":
            peaks[engine] = record["flops_per_second"]
        records.append(record)
    return records


def build_parser():
    """The command line: sizes and workloads, budgets, and the hidden worker options."""
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
    parser.add_argument("--repeats", type=int, help="timed windows per cell (default: 5)")
    parser.add_argument("--warmup", type=int, help="untimed windows first (default: 2)")
    parser.add_argument(
        "--window", type=int, help="steps per timed window of the fit loops (default: 4)"
    )
    parser.add_argument(
        "--only", help=f"comma-separated engines and/or workloads: {list(ENGINES)}, {WORKLOADS}"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="BERT-tiny, batch 4, seq 32 (64 long), 2 windows of 2: runs on a CPU in seconds",
    )
    parser.add_argument(
        "--allow-cpu",
        action="store_true",
        help="run full-size cells on a CPU too (by default only --smoke runs without a GPU)",
    )
    # The defaults keep a whole run (with device_run.sh's install) under eight minutes:
    # every cell ends within the budget, and none runs longer than 150 s.
    parser.add_argument(
        "--cell-timeout", type=int, default=150, help="seconds per cell (default: 150)"
    )
    parser.add_argument(
        "--time-budget",
        type=int,
        default=420,
        help="seconds for all cells together: no cell runs past it, later cells are "
        "recorded as skipped (default: 420)",
    )
    parser.add_argument("--output", help="write the results to this JSON file")
    parser.add_argument("--log", help="append every worker's stderr to this file")
    parser.add_argument("--worker", nargs=2, metavar=("ENGINE", "WORKLOAD"), help=argparse.SUPPRESS)
    parser.add_argument("--settings", help=argparse.SUPPRESS)
    parser.add_argument("--result-file", help=argparse.SUPPRESS)
    return parser


def main(argv=None):
    parser = build_parser()
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
    for name in (
        "batch_size", "seq_length", "long_seq_length", "masked_positions", "repeats", "window"
    ):
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
        log=args.log,
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
