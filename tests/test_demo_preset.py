"""The bundled demo model: registered, small, answers, and its published scores are real."""

import json
import pathlib

import keras
import pytest

from kbert.cli import main
from kbert.models import BertMaskedLM
from kbert.presets import BUILTIN_PRESETS
from kbert.presets import resolve_preset

ROOT = pathlib.Path(__file__).resolve().parents[1]
ASSETS = ROOT / "assets"
DEMO = ROOT / "kbert" / "presets" / "builtin" / "demo"
MAX_PRESET_BYTES = 25 * 1024 * 1024
# demo beats demo-tiny by at least this much masked-LM top-1 on every held-out shard.
MARGIN = 0.05


def test_demo_is_a_builtin_preset_of_at_most_25_megabytes():
    folder = resolve_preset("demo")
    assert folder == pathlib.Path(BUILTIN_PRESETS["demo"]) == DEMO
    size = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
    assert 0 < size <= MAX_PRESET_BYTES
    assert {"config.json", "model.weights.h5", "vocab.txt", "heldout_scores.json"} <= {
        path.name for path in folder.iterdir()
    }


def test_demo_fills_masks_with_its_austen_vocabulary():
    model = BertMaskedLM.from_preset("demo")
    assert model.freshly_initialized_heads == []
    result = model.fill_mask("Elizabeth was [MASK] to see her sister.", top_k=5)
    candidates = result.masks[0].candidates
    assert len(candidates) == 5
    assert all(0 < candidate.probability <= 1 for candidate in candidates)
    assert "elizabeth" in model.tokenizer.vocabulary


def test_the_readme_sentences_get_a_plausible_word_first():
    """The two sentences `scripts/demo.sh` and the README show: a word that fits comes first."""
    model = BertMaskedLM.from_preset("demo")
    fortune = model.fill_mask(
        "It is a truth universally acknowledged, that a single man in possession of a good "
        "fortune, must be in want of a [MASK].",
        top_k=5,
    ).masks[0].candidates
    darcy = model.fill_mask("Mr. Darcy [MASK] into the room.", top_k=5).masks[0].candidates
    assert fortune[0].token in {"wife", "man", "husband", "woman", "friend", "house", "fortune"}
    assert "wife" in [candidate.token for candidate in fortune]
    assert darcy[0].token in {"came", "went", "walked", "ran", "looked", "entered", "stepped"}


@pytest.mark.skipif(
    keras.config.backend() != "jax",
    reason="one backend suffices: the scores were measured on JAX; parity tests cover the others",
)
def test_published_heldout_scores_are_what_the_evaluation_command_measures(capsys):
    published = json.loads((DEMO / "heldout_scores.json").read_text())
    status = main(
        ["evaluate-pretraining", "--model", "demo", "--data", str(ASSETS / "demo-heldout"), "--json"]
    )
    assert status == 0
    measured = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for name in ("mlm_accuracy", "nsp_accuracy"):
        assert measured[name] == pytest.approx(published[name], abs=1e-4)
    assert measured["instances"] == published["instances"]
    # kbert's targets for the demo, on held-out text never used in training.
    assert measured["mlm_accuracy"] >= 0.40 and measured["nsp_accuracy"] >= 0.75
    # The per-corpus breakdown the README reports is published beside them.
    for scores in published["by_corpus"].values():
        assert 0 < scores["mlm_accuracy"] < 1 and 0 < scores["nsp_accuracy"] < 1


DEMO_TINY = ROOT / "kbert" / "presets" / "builtin" / "demo_tiny"
# The held-out shards: both corpora together (the published scores) and each alone.
HELDOUT = {"both": "demo-heldout", "austen": "demo-heldout-austen", "kjv": "demo-heldout-kjv"}


def _measure(model, shards, capsys):
    status = main(["evaluate-pretraining", "--model", model, "--data", str(ASSETS / shards), "--json"])
    assert status == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_the_previous_demo_stays_reachable_as_demo_tiny():
    assert resolve_preset("demo-tiny") == pathlib.Path(BUILTIN_PRESETS["demo-tiny"]) == DEMO_TINY
    demo = json.loads((DEMO / "config.json").read_text())["backbone"]
    tiny = json.loads((DEMO_TINY / "config.json").read_text())["backbone"]
    assert (tiny["num_layers"], tiny["hidden_size"]) == (2, 128)
    assert demo["num_layers"] * demo["hidden_size"] > tiny["num_layers"] * tiny["hidden_size"]
    # One vocabulary: the same held-out shards score both, and "Compare with" lines them up.
    assert (DEMO / "vocab.txt").read_bytes() == (DEMO_TINY / "vocab.txt").read_bytes()


@pytest.mark.skipif(
    keras.config.backend() != "jax",
    reason="one backend suffices: the scores were measured on JAX; parity tests cover the others",
)
def test_demo_beats_demo_tiny_on_every_heldout_shard_as_published(capsys):
    for name, preset in (("demo", DEMO), ("demo-tiny", DEMO_TINY)):
        published = json.loads((preset / "heldout_scores.json").read_text())
        measured = {corpus: _measure(name, shards, capsys) for corpus, shards in HELDOUT.items()}
        assert measured["both"]["mlm_accuracy"] == pytest.approx(published["mlm_accuracy"], abs=1e-4)
        for corpus in ("austen", "kjv"):
            assert measured[corpus]["mlm_accuracy"] == pytest.approx(
                published["by_corpus"][corpus]["mlm_accuracy"], abs=1e-4
            )
        if name == "demo":
            demo = measured
    tiny = measured
    for corpus in HELDOUT:
        assert demo[corpus]["mlm_accuracy"] >= tiny[corpus]["mlm_accuracy"] + MARGIN, corpus
        # kbert's target for the demo on each: 40 % top-1, Austen alone included.
        assert demo[corpus]["mlm_accuracy"] >= 0.40, corpus
