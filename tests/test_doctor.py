"""`kbert doctor`: every backend, engine and extra named, present or not, and the cache."""

import json

import keras

from kbert.cli import main
from kbert.commands import doctor
from light_install_helpers import light_install_environment
from light_install_helpers import run_kbert_without
from process_helpers import on_the_process_pass

BACKENDS = ("jax", "tensorflow", "torch")


def _report(capsys, *arguments):
    assert main(["doctor", *arguments]) == 0
    return capsys.readouterr().out


def test_the_report_names_every_backend_engine_and_extra(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("KBERT_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache" / "onnx").mkdir(parents=True)
    (tmp_path / "cache" / "onnx" / "model.onnx").write_bytes(b"x" * 2500)
    text = _report(capsys)
    labels = [line.split("  ")[0].strip() for line in text.splitlines()]
    for backend in BACKENDS:
        assert f"backend {backend}" in labels
    assert {"engine keras", "engine onnxruntime", "onnx export"} <= set(labels)
    extras = doctor.install_report()["extras"]
    assert {"gui", "search", "onnx", "tensorflow", "torch"} <= set(extras)
    for extra in extras:
        assert f"extra {extra}" in labels
    # One column: every text starts where the longest label ends.
    starts = {len(line) - len(line[len(label):].lstrip()) for line, label in
              zip(text.splitlines(), labels)}
    assert len(starts) == 1
    assert f"{tmp_path / 'cache'} (2.5 KB)" in text
    # The backend Keras runs on is the one marked, with its devices.
    active = next(line for line in text.splitlines() if line.startswith(
        f"backend {keras.config.backend()}"))
    assert "used by Keras, devices: " in active


def test_json_says_the_same(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("KBERT_CACHE", str(tmp_path / "never-made"))
    report = json.loads(_report(capsys, "--json"))
    assert set(report["backends"]) == set(BACKENDS)
    assert report["active_backend"] == keras.config.backend()
    assert report["backends"][keras.config.backend()]["devices"]
    assert report["engines"]["keras"]["installed"] is True
    assert report["cache"] == {"path": str(tmp_path / "never-made"), "exists": False, "bytes": 0}
    for extra in report["extras"].values():
        assert extra["installed"] == (extra["missing"] == [])
        assert extra["install"].startswith('pip install "kbert-keras[')


def test_a_missing_extra_is_named_with_its_command():
    requirements = {"onnx": [("onnxruntime", []), ("no-such-distribution-kbert", [])],
                    "all": [("kbert-keras", ["onnx", "all"])]}
    assert doctor._missing("all", requirements, set()) == {"no-such-distribution-kbert"}


@on_the_process_pass("runs its own process, which chooses its backend")
def test_the_light_install_is_marked_missing(tmp_path):
    completed = run_kbert_without(["doctor", "--json"], light_install_environment(tmp_path))
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stderr == ""
    report = json.loads(completed.stdout)
    assert report["active_backend"] == "jax"
    assert report["backends"]["jax"]["installed"] and report["backends"]["jax"]["devices"]
    for backend in ("tensorflow", "torch"):
        assert report["backends"][backend] == {
            "installed": False, "version": None, "active": False,
            "install": f'pip install "kbert-keras[{backend}]"'}
    assert report["engines"]["onnxruntime"]["installed"] is False
    assert report["engines"]["onnx_export"]["possible"] is False
    for extra in ("gui", "search", "onnx", "torch"):
        assert report["extras"][extra]["installed"] is False
    assert "pyside6" in [name.lower() for name in report["extras"]["gui"]["missing"]]
