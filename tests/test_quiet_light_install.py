"""The light install (`pip install kbert`) is quiet: no command logs a line about an optional
package it does not have, at kbert's usual level (INFO); what the user asks for and is
missing is still an error."""

import re

import pytest

from inference_helpers import make_tokenizer
from inference_helpers import shared_backbone
from kbert.models import BertClassifier
from light_install_helpers import EXTRA_MODULES
from light_install_helpers import light_install_environment
from light_install_helpers import run_kbert_without
from process_helpers import on_the_process_pass

pytestmark = on_the_process_pass("runs its own processes, which choose their backend")

# What a line about a missing package says: kbert's sentences, Python's, or a package name.
MISSING_PACKAGE = re.compile(
    r"not installed|no module named|pip install|kbert\[|"
    + "|".join(re.escape(name) for name in EXTRA_MODULES),
    re.IGNORECASE,
)


@pytest.fixture(scope="module")
def classifier_preset(tmp_path_factory):
    root = tmp_path_factory.mktemp("light-install")
    classifier = BertClassifier(shared_backbone(), label_names=["neg", "pos"])
    classifier.save_to_preset(root / "classifier", tokenizer=make_tokenizer(root))
    return str(root / "classifier")


def _missing_package_lines(stderr):
    return [line for line in stderr.splitlines() if MISSING_PACKAGE.search(line)]


@pytest.mark.parametrize("arguments", [
    ["--help"],
    ["fill-mask", "--model", "demo", "the [MASK] sat on the mat ."],
    ["classify", "--model", "CLASSIFIER", "the cat sat"],
    ["classify", "--model", "CLASSIFIER", "--engine", "auto", "--json", "a", "the dog"],
], ids=["help", "fill-mask", "classify", "classify-json"])
def test_no_command_logs_a_missing_optional_package(arguments, classifier_preset, tmp_path):
    arguments = [classifier_preset if word == "CLASSIFIER" else word for word in arguments]
    completed = run_kbert_without(arguments, light_install_environment(tmp_path))
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip()
    assert _missing_package_lines(completed.stderr) == [], completed.stderr[-3000:]


def test_a_missing_engine_the_user_asks_for_is_still_an_error(classifier_preset, tmp_path):
    completed = run_kbert_without(
        ["classify", "--model", classifier_preset, "--engine", "onnxruntime", "the cat sat"],
        light_install_environment(tmp_path))
    assert completed.returncode == 1
    assert completed.stderr.startswith("kbert classify: error: ONNX Runtime is not installed")
    assert completed.stderr.strip().endswith('pip install "kbert-keras[onnx]"')


def test_a_missing_backend_the_user_asks_for_is_still_an_error(tmp_path):
    environment = dict(light_install_environment(tmp_path), KERAS_BACKEND="torch")
    completed = run_kbert_without(["fill-mask", "--model", "demo", "a [MASK]"], environment)
    assert completed.returncode == 1
    assert completed.stderr.startswith("kbert fill-mask: error: PyTorch is not installed")
    assert 'pip install "kbert-keras[torch]"' in completed.stderr
