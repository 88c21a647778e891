"""The bundled task models: `demo` fine-tuned on published data, shipped in the package.

Each is built by scripts/build_task_models.py; its held-out score is in its
`heldout_scores.json` and assets/README.md. Here: it is registered and small, stored as
float16 and read as float32, the commands use it when no `--model` is given, and it gets
plain cases right. The held-out score itself is measured again when the published data is
at hand (`KBERT_PUBLISHED_DATA`, the folder scripts/fetch_published_data.sh wrote).
"""

import json
import os
import pathlib

import h5py
import keras
import numpy as np
import pytest

from kbert.cli import main
from kbert.presets import BUILTIN_PRESETS
from kbert.presets import resolve_preset

ROOT = pathlib.Path(__file__).resolve().parents[1]
SPAM = ROOT / "kbert" / "presets" / "builtin" / "demo_spam"
MAX_TASK_MODEL_BYTES = 12 * 1024 * 1024
SPAM_TEXTS = (
    "WINNER!! You have been selected to receive a £900 prize reward! To claim call "
    "09061701461. Claim code KL341. Valid 12 hours only.",
    "FREE entry in 2 a wkly comp to win FA Cup final tkts 21st May 2005. Text FA to 87121 "
    "to receive entry question",
)
HAM_TEXTS = (
    "Ok lar... I'll see you at home after work, do you want me to get some milk?",
    "Sorry, I'll call you later. I am in a meeting now.",
)


def _json_lines(capsys):
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_demo_spam_is_a_small_float16_builtin_with_its_source_and_score():
    assert resolve_preset("demo-spam") == pathlib.Path(BUILTIN_PRESETS["demo-spam"]) == SPAM
    size = sum(path.stat().st_size for path in SPAM.rglob("*") if path.is_file())
    assert 0 < size <= MAX_TASK_MODEL_BYTES
    with h5py.File(SPAM / "model.weights.h5", "r") as file:
        dtypes = set()
        file.visititems(
            lambda name, item: dtypes.add(item.dtype) if isinstance(item, h5py.Dataset) else None
        )
    assert dtypes == {np.dtype("float16")}
    metadata = json.loads((SPAM / "metadata.json").read_text(encoding="utf-8"))
    assert metadata["fine_tuned_from"] == "demo"
    assert metadata["data_licence"] == "CC BY 4.0" and "SMS Spam Collection" in metadata["train_data"]
    scores = json.loads((SPAM / "heldout_scores.json").read_text(encoding="utf-8"))
    assert scores["test"]["accuracy"] >= 0.95
    # Stored as float16, it scores as the float32 model did, within half a point.
    assert abs(scores["test"]["accuracy"] - scores["test_float32"]["accuracy"]) <= 0.005
    assert scores["test"]["examples"] == 500


def test_kbert_classify_without_a_model_runs_the_bundled_spam_filter(capsys):
    status = main(["classify", "--json", *SPAM_TEXTS, *HAM_TEXTS])
    assert status == 0
    results = _json_lines(capsys)
    assert [result["label"] for result in results] == ["spam"] * 2 + ["ham"] * 2
    for result in results:
        assert set(result["probabilities"]) == {"ham", "spam"}
        assert result["probabilities"][result["label"]] > 0.5


def test_the_bundled_weights_load_as_float32():
    from kbert.models import BertClassifier

    model = BertClassifier.from_preset("demo-spam")
    assert model.freshly_initialized_heads == []
    assert {str(weight.dtype) for weight in model.weights} == {"float32"}
    assert list(model.label_names) == ["ham", "spam"]


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("KBERT_PUBLISHED_DATA") or keras.config.backend() != "jax",
    reason="needs the published data (KBERT_PUBLISHED_DATA) and JAX, the scores' backend",
)
def test_the_published_heldout_accuracy_is_what_evaluate_measures(tmp_path, capsys):
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import published_tasks

    data = pathlib.Path(os.environ["KBERT_PUBLISHED_DATA"])
    paths = published_tasks.write_splits("sms", data, tmp_path, "full")
    status = main(["evaluate", "--task", "classification", "--model", "demo-spam",
                   "--data", str(paths["test"]), "--max-length", "128", "--json"])
    assert status == 0
    measured = _json_lines(capsys)[-1]["metrics"]
    published = json.loads((SPAM / "heldout_scores.json").read_text(encoding="utf-8"))["test"]
    assert measured["accuracy"] == pytest.approx(published["accuracy"], abs=1e-6)
