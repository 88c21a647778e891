"""kbert against transformers' Trainer on published data: the same weights, examples and recipe.

For each task, both engines fine-tune all-MiniLM-L6-v2 (real BERT weights, uncased
WordPiece) on the same training split with the same recipe (learning rate, batch size,
epochs, linear warm-up and decay, weight decay, gradient clipping, max length, seed,
AdamW's epsilon after the bias correction as Trainer places it), keep the best epoch by
the dev split, and are scored on the test split by the task's reference metrics
(accuracy and macro-F1 from scikit-learn; SQuAD v1.1's exact match and F1, kbert's as
`kbert evaluate` gives them, Trainer's by the official script's rules in
published_squad.py, which also rescores kbert's predictions by them). kbert runs as a
user runs it: `KERAS_BACKEND=torch kbert finetune` and `kbert evaluate` (`kbert.cli.main`
in a worker process); Trainer runs in a worker process of its own. The two run one after the other,
never side by side.

Per engine and task the table gives the two test scores, each named, the training wall
time (from the process start to the saved best model, loading, conversion and
compilation included), the time to the first training step, training examples (SQuAD:
questions) per second and the worker's peak memory.

The tasks and their fixed splits (a seeded permutation of the published file; the
smaller sizes are the first rows of each split):

| task | source | classes | train / dev / test |
| --- | --- | --- | --- |
| sms | SMS Spam Collection subset, 4,837 rows | 2 | 3,837 / 500 / 500 |
| trec | TREC train_5500 (the file's last 5,452 lines), coarse labels | 6 | 4,452 / 500 / 500 |
| bbc | BBC News, 2,225 articles (title and body) | 5 | 1,725 / 250 / 250 |
| squad | SQuAD v1.1 questions (published_squad.py) | spans | 4,000 / 300 / 1,000 |

`--size small`: 1,000 / 250 / 250 (BBC 400 / 100 / 100; SQuAD 1,000 / 100 / 150).
`--size tiny`, a smoke test of one epoch: 200 / 50 / 50 (SQuAD 200 / 50 / 100).

Usage (after the README's set-up, `.venv/bin/pip install -e ".[benchmarks]"` for Trainer's
accelerate, and `bash scripts/fetch_published_data.sh DATA`):
    python benchmarks/published_tasks.py DATA [--tasks sms trec bbc squad]
        [--size tiny|small|full]
        [--engines kbert trainer] [--work WORK] [--backend torch|jax|tensorflow]
        [--long-texts truncate|windows]

kbert runs on PyTorch unless `--backend` says otherwise: on a CPU, Keras' eager PyTorch
step (with BertAdamW's all-at-once update) trains faster than XLA's compiled step, which
also compiles once per length bucket (NOTES section 9 has both).
"""

import argparse
import csv
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import time

import numpy as np

import published_flops
import published_squad

HERE = pathlib.Path(__file__).resolve().parent
SPLIT_SEED = 20261207
# The recipe both engines run: each task's own settings, then the common ones.
RECIPES = {
    "sms": dict(epochs=2, batch_size=32, learning_rate=1e-4, max_length=128),
    "trec": dict(epochs=3, batch_size=32, learning_rate=1e-4, max_length=64),
    "bbc": dict(epochs=3, batch_size=16, learning_rate=1e-4, max_length=256),
    "squad": dict(epochs=2, batch_size=32, learning_rate=1e-4, max_length=256),
}
COMMON_RECIPE = dict(warmup_ratio=0.1, weight_decay=0.01, clip_norm=1.0, seed=0)
SPLITS = {"sms": (3837, 500, 500), "trec": (4452, 500, 500), "bbc": (1725, 250, 250)}
SMALL_SPLITS = {"sms": (1000, 250, 250), "trec": (1000, 250, 250), "bbc": (400, 100, 100)}
TINY_SPLITS = {"sms": (200, 50, 50), "trec": (200, 50, 50), "bbc": (200, 50, 50)}
TINY_EPOCHS = 1  # --size tiny: a check that everything runs, not a result
# The test scores of each task, the first the one that keeps the best epoch.
METRICS = {"squad": ("exact_match", "f1")}
CLASSIFICATION_METRICS = ("accuracy", "macro_f1")
# How the table names a score and what turns it into percent.
METRIC_NAMES = {"accuracy": ("accuracy", 100), "macro_f1": ("macro-F1", 100),
                "exact_match": ("EM", 1), "f1": ("F1", 1)}


# --- The published files as labelled examples ------------------------------------------


def _sms(data):
    with open(data / "sms" / "sms-spam.csv", newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    return [(row["text"], "spam" if row["spam"] == "1" else "ham") for row in rows]


def _trec(data):
    lines = (data / "trec" / "question_labels.txt").read_text(encoding="latin-1").splitlines()
    examples = []
    for line in lines[-5452:]:  # train_5500: the last of the five training subsets
        label, _, question = line.partition(" ")
        examples.append((question.strip(), label.split(":")[0]))
    return examples


def _bbc(data):
    examples = []
    for path in sorted((data / "bbc").glob("*/*.txt")):
        text = path.read_text(encoding="utf-8", errors="replace")
        examples.append((" ".join(text.split()), path.parent.name))
    return examples


READERS = {"sms": _sms, "trec": _trec, "bbc": _bbc}


def write_splits(task, data, work, size):
    """Writes train/dev/test files of `task` (CSV text,label; SQuAD JSON); their paths."""
    if task == "squad":
        return published_squad.write_splits(data, work, size, SPLIT_SEED)
    examples = READERS[task](data)
    order = np.random.default_rng(SPLIT_SEED).permutation(len(examples))
    sizes = SPLITS[task]
    bounds = np.cumsum((0,) + sizes)
    if sum(sizes) != len(examples):
        raise ValueError(f"{task}: {len(examples)} examples, expected {sum(sizes)}")
    keep = {"tiny": TINY_SPLITS, "small": SMALL_SPLITS}.get(size, SPLITS)[task]
    folder = work / task / "data"
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for index, name in enumerate(("train", "dev", "test")):
        chosen = order[bounds[index]:bounds[index + 1]][: keep[index]]
        paths[name] = folder / f"{name}.csv"
        with open(paths[name], "w", newline="", encoding="utf-8") as file:
            writer = csv.writer(file)
            writer.writerow(["text", "label"])
            writer.writerows(examples[i] for i in chosen)
    return paths


# --- The engines, each in a worker process ----------------------------------------------


def _kbert_flags(request):
    """`kbert finetune`'s and `kbert evaluate`'s arguments for the request's task."""
    recipe, paths = request["recipe"], request["paths"]
    task = "qa" if request["task"] == "squad" else "classification"
    shared = ["--task", task, "--max-length", str(recipe["max_length"])]
    if task == "qa":  # kbert's default, written out: Trainer's windows are cut to match
        shared += ["--doc-stride", str(published_squad.DOC_STRIDE)]
    else:  # texts longer than max_length: cut (as Trainer does) or read in windows
        shared += ["--long-texts", request.get("long_texts", "truncate")]
    finetune = [
        "finetune", *shared, "--model", request["model"], "--train", paths["train"],
        "--eval", paths["dev"], "--output", request["output"],
        "--epochs", str(recipe["epochs"]), "--batch-size", str(recipe["batch_size"]),
        "--learning-rate", str(recipe["learning_rate"]),
        "--warmup-ratio", str(recipe["warmup_ratio"]),
        "--weight-decay", str(recipe["weight_decay"]), "--clip-norm", str(recipe["clip_norm"]),
        "--seed", str(recipe["seed"]), "--adam-epsilon-style", "torch",
        "--precision", "float32",
    ]
    if task == "classification":  # qa keeps the best epoch by exact match, its only rule
        finetune += ["--metric", "accuracy"]
    evaluate = ["evaluate", *shared, "--model", f"{request['output']}/model",
                "--data", paths["test"], "--json"]
    return finetune, evaluate


def _kbert_worker(request):
    """`kbert finetune` then `kbert evaluate`, as a user runs them; the first step timed."""
    # As a user picks it: `KERAS_BACKEND=torch kbert finetune ...`.
    os.environ["KERAS_BACKEND"] = request.get("backend", "torch")
    started = time.perf_counter()
    from kbert import cli
    from kbert.finetuning import fine_tuner

    first_step = {}

    class FirstStep:  # a kbert.training.TrainingCallback
        def on_step(self, step, logs):
            first_step.setdefault("seconds", time.perf_counter() - started)

    original_init = fine_tuner.FineTuner.__init__

    def timed_init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self.callbacks = [*self.callbacks, FirstStep()]

    fine_tuner.FineTuner.__init__ = timed_init
    finetune, evaluate = _kbert_flags(request)
    code = cli.main(finetune)
    if code:
        raise SystemExit(f"kbert finetune exited {code}")
    trained = time.perf_counter() - started
    folder = pathlib.Path(request["output"]).parent
    predictions, scores_file = folder / "test_predictions.jsonl", folder / "test_scores.json"
    with open(scores_file, "w", encoding="utf-8") as sink:
        sys.stdout, saved = sink, sys.stdout
        try:
            code = cli.main([*evaluate, "--predictions", str(predictions)])
        finally:
            sys.stdout = saved
    if code:
        raise SystemExit(f"kbert evaluate exited {code}")
    scores = json.loads(scores_file.read_text(encoding="utf-8").strip().splitlines()[-1])
    result = {"train_seconds": trained, "first_step_seconds": first_step.get("seconds"),
              "scores": {name: scores["metrics"][name] for name in _metrics(request["task"])}}
    if request["task"] == "squad":  # kbert's predictions by the official script's rules
        result["official_v1_scores"] = published_squad.rescore_predictions(predictions)
    return result


def _classification_parts(transformers, tokenizer, request):
    """Classification's share of Trainer's run: the model and, per split, its features
    and scorer."""
    from sklearn.metrics import accuracy_score
    from sklearn.metrics import f1_score

    paths, max_length = request["paths"], request["recipe"]["max_length"]
    labels = sorted({label for _, label in _read_csv(paths["train"])})
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        request["model"], num_labels=len(labels)
    )

    def metrics(prediction):
        predicted = np.argmax(prediction.predictions, axis=-1)
        return {"accuracy": accuracy_score(prediction.label_ids, predicted),
                "macro_f1": f1_score(prediction.label_ids, predicted, average="macro")}

    def encoded(name):
        rows = _read_csv(paths[name])
        features = tokenizer([text for text, _ in rows], truncation=True, max_length=max_length)
        ids = [labels.index(label) for _, label in rows]
        return [
            {**{key: value[i] for key, value in features.items()}, "labels": ids[i]}
            for i in range(len(rows))
        ], metrics

    return model, encoded


def _trainer_worker(request):
    """transformers' Trainer on the same weights, splits and recipe."""
    started = time.perf_counter()
    import torch
    import transformers

    recipe = request["recipe"]
    torch.set_num_threads(os.cpu_count() or 1)
    tokenizer = transformers.AutoTokenizer.from_pretrained(request["model"])
    parts = published_squad.trainer_parts if request["task"] == "squad" else _classification_parts
    model, encoded = parts(transformers, tokenizer, request)
    (train, _), (dev, dev_scores) = encoded("train"), encoded("dev")
    first_step = {}

    class FirstStep(transformers.TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            first_step.setdefault("seconds", time.perf_counter() - started)

    arguments = transformers.TrainingArguments(
        output_dir=request["output"], per_device_train_batch_size=recipe["batch_size"],
        per_device_eval_batch_size=32, learning_rate=recipe["learning_rate"],
        # A float below 1 is a share of the steps (transformers 5 dropped warmup_ratio).
        num_train_epochs=recipe["epochs"], warmup_steps=recipe["warmup_ratio"],
        weight_decay=recipe["weight_decay"], max_grad_norm=recipe["clip_norm"],
        lr_scheduler_type="linear", seed=recipe["seed"], eval_strategy="epoch",
        save_strategy="epoch", save_total_limit=1, load_best_model_at_end=True,
        metric_for_best_model=_metrics(request["task"])[0], report_to=[], use_cpu=True,
        logging_strategy="no", disable_tqdm=True,
    )
    trainer = transformers.Trainer(
        model=model, args=arguments, train_dataset=train, eval_dataset=dev,
        compute_metrics=dev_scores, data_collator=transformers.DataCollatorWithPadding(tokenizer),
        callbacks=[FirstStep()],
    )
    trainer.train()
    trainer.save_model(f"{request['output']}/model")
    trained = time.perf_counter() - started
    test, test_scores = encoded("test")
    return {"train_seconds": trained, "first_step_seconds": first_step.get("seconds"),
            "scores": test_scores(trainer.predict(test))}


WORKERS = {"kbert": _kbert_worker, "trainer": _trainer_worker}


def _metrics(task):
    return METRICS.get(task, CLASSIFICATION_METRICS)


def _read_csv(path):
    with open(path, newline="", encoding="utf-8") as file:
        return [(row["text"], row["label"]) for row in csv.DictReader(file)]


def _worker_main(engine, request_file):
    request = json.loads(pathlib.Path(request_file).read_text(encoding="utf-8"))
    result = WORKERS[engine](request)
    result["peak_memory_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("RESULT " + json.dumps(result), flush=True)


def run_engine(engine, task, data, paths, work, size="full", backend="torch",
               long_texts="truncate"):
    """Runs one engine on one task in a fresh process; its result dict (with the useful
    training FLOPs of a classification run, for its utilisation)."""
    folder = work / task / engine
    if folder.exists():
        shutil.rmtree(folder)  # every run starts from nothing, as a new user's
    folder.mkdir(parents=True)
    recipe = {**COMMON_RECIPE, **RECIPES[task]}
    if size == "tiny":
        recipe["epochs"] = TINY_EPOCHS
    request = {"task": task, "recipe": recipe, "paths": {k: str(v) for k, v in paths.items()},
               "model": str(data / "minilm"), "output": str(folder / "run"), "backend": backend,
               "long_texts": long_texts}
    request_file = folder / "request.json"
    request_file.write_text(json.dumps(request), encoding="utf-8")
    # A cache of its own for kbert, emptied first: the one-time conversion and the
    # compilations are part of what a new user waits for.
    cache = work / "kbert-cache"
    shutil.rmtree(cache, ignore_errors=True)
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", HF_HUB_OFFLINE="1",
                       TRANSFORMERS_OFFLINE="1", KBERT_CACHE=str(cache))
    done = subprocess.run(
        [sys.executable, __file__, "--worker", engine, str(request_file)],
        capture_output=True, text=True, env=environment,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise RuntimeError(f"{engine} on {task} failed:\n{done.stderr[-3000:]}")
    result = json.loads(lines[-1][len("RESULT "):])
    result["examples_per_second"] = (
        recipe["epochs"] * _count(paths["train"]) / result["train_seconds"]
    )
    if paths["train"].suffix == ".csv":
        result["useful_flops"] = published_flops.classification_flops(
            paths["train"], data / "minilm", recipe
        )
    return result


def _count(path):
    """Training examples in `path` (questions, for SQuAD)."""
    if path.suffix == ".json":
        return published_squad.count_questions(path)
    return len(_read_csv(path))


def table(results):
    """The results as a Markdown table, kbert's time as a ratio of Trainer's.

    Each row names its two test scores (in percent): accuracy and macro-F1 for the
    classification tasks, exact match (EM) and F1 for SQuAD.
    """
    lines = [
        "| task | engine | test score 1 | test score 2 | training wall time | first step "
        "| examples/s | MFU | peak memory |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for task, engines in results.items():
        for engine, result in engines.items():
            ratio = ""
            if engine == "kbert" and "trainer" in engines:
                ratio = f" ({result['train_seconds'] / engines['trainer']['train_seconds']:.2f}x)"
            scores = " | ".join(
                f"{METRIC_NAMES[name][0]} {METRIC_NAMES[name][1] * result['scores'][name]:.1f}"
                for name in _metrics(task)
            )
            lines.append(
                f"| {task} | {engine} | {scores} | {result['train_seconds']:.0f} s{ratio} "
                f"| {result['first_step_seconds']:.1f} s | {result['examples_per_second']:.1f} "
                f"| {_percent(result.get('mfu'))} | {result['peak_memory_mb']:.0f} MB |"
            )
    return "\n".join(lines)


def _percent(fraction):
    return "-" if fraction is None else f"{100 * fraction:.1f} %"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=pathlib.Path, help="the folder the fetch script filled")
    parser.add_argument("--tasks", nargs="+", choices=sorted(RECIPES), default=sorted(RECIPES))
    parser.add_argument("--engines", nargs="+", choices=sorted(WORKERS), default=["kbert", "trainer"])
    parser.add_argument("--size", choices=("tiny", "small", "full"), default="full",
                        help="tiny: a smoke test (one epoch, a few hundred examples)")
    parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path("published-tasks"))
    parser.add_argument("--backend", choices=("torch", "jax", "tensorflow"), default="torch",
                        help="kbert's Keras backend (default torch: on a CPU its eager step "
                             "trains faster than XLA's compiled one, NOTES section 9)")
    parser.add_argument("--long-texts", choices=("truncate", "windows"), default="truncate",
                        help="kbert's reading of texts over max_length (Trainer truncates); "
                             "BBC News articles are mostly longer")
    args = parser.parse_args(argv)
    rates = published_flops.peak_flops_per_second()  # each framework's matmul, measured now
    results = {}
    for task in args.tasks:
        paths = write_splits(task, args.data, args.work, args.size)
        results[task] = {}
        for engine in args.engines:
            results[task][engine] = run_engine(
                engine, task, args.data, paths, args.work, args.size, args.backend,
                args.long_texts,
            )
            print(f"{task} {engine}: {json.dumps(results[task][engine])}", flush=True)
    rates = published_flops.peak_flops_per_second(rates)  # and after: the higher of the two
    print(f"float32 matrix-multiply peak, FLOP/s: {json.dumps(rates)}", flush=True)
    published_flops.add_utilisation(results, rates, {"kbert": args.backend})
    saved = {"peak_flops_per_second": rates, "kbert_backend": args.backend,
             "kbert_long_texts": args.long_texts, **results}
    (args.work / "results.json").write_text(json.dumps(saved, indent=2), encoding="utf-8")
    print(table(results))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        _worker_main(sys.argv[2], sys.argv[3])
    else:
        main()
