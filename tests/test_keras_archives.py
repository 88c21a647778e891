"""`.keras` files as a model source: from_preset, the CLI, `keras.saving.load_model` after
a bare `import kbert`, and hostile archives refused before they are extracted."""

import ast
import json
import os
import pathlib
import subprocess
import sys
import zipfile

import keras
import numpy as np
import pytest

from inference_helpers import VOCABULARY
from inference_helpers import make_tokenizer
from keras_archive_helpers import link_attributes
from keras_archive_helpers import write_archive
from model_helpers import TINY
from model_helpers import make_inputs
from kbert.cli import main
from kbert.keras_registry import KERAS_CLASSES
from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.models import BertTask
from kbert.presets import resolve_preset

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent
LABELS = ["negative", "positive"]


@pytest.fixture(scope="module")
def keras_file(tmp_path_factory):
    """A tiny classifier with its tokenizer and label names, saved by `model.save`."""
    folder = tmp_path_factory.mktemp("keras_file")
    backbone = BertBackbone(**dict(TINY, vocabulary_size=len(VOCABULARY), max_positions=32))
    model = BertClassifier(backbone, label_names=LABELS)
    model.tokenizer = make_tokenizer(folder, max_length=32)
    model.compile()
    path = folder / "sentiment.keras"
    model.save(path)
    return path, model


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("KBERT_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _logits(model):
    inputs = make_inputs(vocabulary_size=len(VOCABULARY))
    return np.asarray(model.predict_on_batch(inputs))


def test_a_keras_file_loads_as_the_task_it_holds_with_tokenizer_and_labels(keras_file, private_cache):
    path, saved = keras_file
    model = BertTask.from_preset(path)
    assert type(model) is BertClassifier
    assert model.label_names == LABELS
    assert model.tokenizer.vocabulary == saved.tokenizer.vocabulary
    np.testing.assert_allclose(_logits(model), _logits(saved), atol=1e-5)
    # Converted once into the cache; a second load reads the converted preset.
    converted = list((private_cache / "converted").glob("keras-*"))
    assert len(converted) == 1 and resolve_preset(path) == converted[0]
    assert BertClassifier.from_preset(str(path)).label_names == LABELS


def test_the_cli_classifies_and_converts_with_a_keras_file(keras_file, capsys, tmp_path):
    path, saved = keras_file
    assert main(["classify", "--model", str(path), "--json", "the cat sat"]) == 0
    result = json.loads(capsys.readouterr().out.splitlines()[0])
    assert set(result["probabilities"]) == set(LABELS)
    expected = saved.classify("the cat sat")
    assert result["label"] == expected.label
    assert main(["convert", str(path), str(tmp_path / "preset")]) == 0
    converted = BertClassifier.from_preset(tmp_path / "preset")
    np.testing.assert_allclose(_logits(converted), _logits(saved), atol=1e-5)


def test_import_kbert_alone_lets_keras_load_a_kbert_file(keras_file, tmp_path):
    path, _ = keras_file
    script = (
        "import sys, kbert\n"
        "light = [name for name in ('keras', 'tensorflow', 'kbert_gui') if name in sys.modules]\n"
        "import keras\n"
        f"model = keras.saving.load_model({str(path)!r})\n"
        "print(json.dumps({'light': light, 'class': type(model).__name__,\n"
        "    'labels': model.label_names, 'tokenizer': model.tokenizer is not None}))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", "import json\n" + script],
        cwd=tmp_path,
        env={**os.environ, "KBERT_CACHE": str(tmp_path / "cache")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = json.loads(completed.stdout.splitlines()[-1])
    assert report == {"light": [], "class": "BertClassifier", "labels": LABELS, "tokenizer": True}


def _registered_in_source():
    """`{class: module}` of every class kbert registers with Keras, read from the source."""
    found = {}
    for path in sorted((ROOT / "kbert").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                "register_keras_serializable" in ast.unparse(decorator)
                for decorator in node.decorator_list
            ):
                found[node.name] = module
    return found


def test_the_registry_table_lists_every_registered_class():
    assert _registered_in_source() == KERAS_CLASSES


@pytest.mark.parametrize(
    "member, data, message",
    [
        ("../escaped.txt", b"x", "has a path that leaves the archive"),
        ("/etc/escaped", b"x", "has a path that leaves the archive"),
        ("assets\\..\\escaped", b"x", "has a path that leaves the archive"),
        ("assets/vocab.txt", (b"/etc/passwd", link_attributes()), "is a link"),
    ],
)
def test_members_that_leave_the_archive_or_link_are_refused(tmp_path, member, data, message):
    path = write_archive(
        tmp_path / "hostile.keras",
        {"config.json": b"{}", "model.weights.h5": b"", member: data},
    )
    with pytest.raises(ValueError, match=message) as error:
        resolve_preset(path)
    assert str(path) in str(error.value) and "\n" not in str(error.value)
    assert not (tmp_path / "cache" / "converted").exists()


def test_an_archive_naming_no_kbert_class_is_refused_before_anything_is_built(tmp_path):
    config = {"module": "keras", "class_name": "Sequential", "config": {}, "registered_name": None}
    path = write_archive(
        tmp_path / "other.keras",
        {"config.json": json.dumps(config).encode(), "model.weights.h5": b""},
    )
    with pytest.raises(ValueError, match="registered Keras model|not a kbert model class"):
        resolve_preset(path)


@pytest.mark.skipif(
    keras.config.backend() != "jax",
    reason="refused before Keras or a backend loads; the JAX pass runs it",
)
def test_a_deflate_bomb_and_a_traversal_are_refused_within_a_gigabyte(tmp_path):
    completed = subprocess.run(
        [sys.executable, str(HERE / "keras_archive_helpers.py"), str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = json.loads(completed.stdout.splitlines()[-1])
    bomb, traversal = report["results"]["deflate_bomb"], report["results"]["traversal"]
    assert "compression bomb" in bomb or "are stored on disk" in bomb, bomb
    assert "'assets/../../escaped.txt' has a path that leaves the archive" in traversal
    assert report["outside"] == []
    assert report["peak_rss_bytes"] < 2**30, report["peak_rss_bytes"]


def test_a_config_naming_a_lambda_is_refused_and_never_runs(keras_file, tmp_path):
    path, _ = keras_file
    sentinel = tmp_path / "ran.txt"
    members = {}
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            members[name] = archive.read(name)
    config = json.loads(members["config.json"])
    with pytest.warns(UserWarning, match="lambda"):
        code = keras.saving.serialize_keras_object(
            lambda x, target=str(sentinel): open(target, "w").write("x")
        )
    config["config"]["backbone"]["config"]["dtype"] = code
    members["config.json"] = json.dumps(config).encode()
    hostile = write_archive(tmp_path / "lambda.keras", members)
    with pytest.raises(ValueError, match="holds a Python lambda") as error:
        resolve_preset(hostile)
    assert "\n" not in str(error.value)
    # Past that check, Keras builds in safe mode, which refuses a lambda too.
    from kbert.checkpoints.keras_archive import _build

    config["config"]["backbone"] = code
    with pytest.raises(ValueError, match="safe mode.*lambda"):
        _build(hostile, config, tmp_path)
    assert not sentinel.exists()
