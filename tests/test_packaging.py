"""kbert as an installed package: the wheel holds the built-in presets, the app under
kbert's own name, the licence and the type marker, and works outside the checkout."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import keras
import pytest
from process_helpers import on_the_process_pass

ROOT = pathlib.Path(__file__).resolve().parents[1]
tomllib = pytest.importorskip("tomllib")
# The wheel ships the demo and the bundled task models: it stays under 60 MB.
MAX_WHEEL_BYTES = 60 * 1024 * 1024


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _wheel_prefix():
    """A wheel's file name up to its version: the distribution, normalized (PEP 427)."""
    return re.sub(r"[-_.]+", "_", _pyproject()["project"]["name"]).lower()


def _package_folders():
    """Every package the source tree holds, by its installed name."""
    found = {
        ".".join(path.parent.relative_to(ROOT).parts)
        for path in (ROOT / "kbert").rglob("__init__.py")
    }
    found |= {
        ".".join(path.parent.relative_to(ROOT).parts)
        for path in (ROOT / "kbert" / "presets" / "builtin").glob("*/config.json")
    }
    # The app's packages, gui/ and its sub-packages, install under `kbert_gui`.
    found |= {
        ".".join(("kbert_gui",) + path.parent.relative_to(ROOT / "gui").parts)
        for path in (ROOT / "gui").rglob("__init__.py")
    }
    return found


def test_pyproject_lists_every_package_and_maps_the_app_to_kbert_gui():
    setuptools = _pyproject()["tool"]["setuptools"]
    assert set(setuptools["packages"]) == _package_folders()
    assert setuptools["package-dir"] == {"kbert_gui": "gui"}
    assert "gui" not in setuptools["packages"]


def test_license_and_type_marker_exist():
    project = _pyproject()["project"]
    assert project["license"] == "Apache-2.0"
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert (ROOT / "kbert" / "py.typed").is_file()


def _build_wheel(folder):
    # A copy of the tree: building writes build/ and *.egg-info beside the sources.
    source = folder / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache"
        ),
    )
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "-w", str(folder / "dist"), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    build_output = "\n".join(
        line for line in (result.stdout + result.stderr).splitlines()
        # pip's own notes about the machine's package indexes are not the build's.
        if "is ignored" not in line
    )
    assert "warning" not in build_output.lower(), build_output
    (wheel,) = (folder / "dist").glob(f"{_wheel_prefix()}-*.whl")
    return wheel


@pytest.mark.slow
def test_wheel_installs_and_runs_the_demo_outside_the_checkout(tmp_path):
    wheel = _build_wheel(tmp_path)
    assert wheel.stat().st_size < MAX_WHEEL_BYTES
    names = zipfile.ZipFile(wheel).namelist()
    assert "kbert/presets/builtin/demo/model.weights.h5" in names
    assert "kbert/presets/builtin/demo_spam/model.weights.h5" in names
    assert "kbert/py.typed" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert "kbert_gui/app.py" in names
    assert not any(name.startswith("gui/") for name in names)

    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
         str(wheel)],
        check=True, capture_output=True, text=True, timeout=300,
    )
    assert (site / "kbert_gui").is_dir() and not (site / "gui").exists()

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    environment = dict(
        os.environ,
        PYTHONPATH=str(site),
        KERAS_BACKEND=keras.config.backend(),
        KBERT_CACHE=str(tmp_path / "cache"),
    )
    script = (
        "import json, kbert, kbert_gui\n"
        "from kbert.models import BertMaskedLM\n"
        "model = BertMaskedLM.from_preset('demo')\n"
        "result = model.fill_mask('the [MASK] of the lord.', top_k=3)\n"
        "print(json.dumps({'kbert': kbert.__file__, 'gui': kbert_gui.__file__,\n"
        "    'tokens': [c.token for c in result.masks[0].candidates]}))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=elsewhere, env=environment,
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["kbert"].startswith(str(site)) and report["gui"].startswith(str(site))
    assert len(report["tokens"]) == 3 and all(report["tokens"])

    command = site / "bin" / "kbert"
    version = subprocess.run(
        [str(command), "--version"], cwd=elsewhere, env=environment,
        capture_output=True, text=True, timeout=120,
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"kbert {_pyproject()['project']['version']}"
    fill = subprocess.run(
        [str(command), "fill-mask", "--json", "a [MASK] of the lord."], cwd=elsewhere,
        env=environment, capture_output=True, text=True, timeout=300,
    )
    assert fill.returncode == 0, fill.stderr
    assert json.loads(fill.stdout.splitlines()[0])["masks"][0]["candidates"]
    # No --model: `kbert classify` runs the bundled spam filter, from the wheel.
    classify = subprocess.run(
        [str(command), "classify", "--json", "Sorry, I'll call you later. I am in a meeting."],
        cwd=elsewhere, env=environment, capture_output=True, text=True, timeout=300,
    )
    assert classify.returncode == 0, classify.stderr
    assert json.loads(classify.stdout.splitlines()[0])["label"] == "ham"


@on_the_process_pass("installs a venv from the package registry once")
@pytest.mark.slow
def test_a_fresh_venv_with_the_wheel_alone_runs_fill_mask_and_a_fit(tmp_path):
    wheel = _build_wheel(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python, command = venv / "bin" / "python", venv / "bin" / "kbert"
    # No extras: pip resolves the core's requirements (Keras, JAX, ...) from the registry.
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(wheel)],
        capture_output=True, text=True, timeout=1800,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    environment = {
        key: value for key, value in os.environ.items()
        if key not in ("KERAS_BACKEND", "PYTHONPATH", "VIRTUAL_ENV")
    }
    environment["KBERT_CACHE"] = str(tmp_path / "cache")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def run(arguments, **changes):
        return subprocess.run(
            arguments, cwd=elsewhere, env=dict(environment, **changes),
            capture_output=True, text=True, timeout=600,
        )

    missing = run([str(python), "-c", "import importlib.util as u; print(sorted("
                   "n for n in ('tensorflow', 'torch', 'PySide6') if u.find_spec(n)))"])
    assert missing.stdout.strip() == "[]", missing.stdout + missing.stderr
    fill = run([str(command), "fill-mask", "--model", "demo", "--json", "a [MASK] of the lord."])
    assert fill.returncode == 0, fill.stderr[-3000:]
    assert json.loads(fill.stdout.splitlines()[0])["masks"][0]["candidates"]
    fit = run([str(python), "-c",
               "from kbert.models import BertClassifier\n"
               "model = BertClassifier.from_preset('demo', label_names=['no', 'yes'])\n"
               "history = model.fit(['a fine film', 'a dull plot'], ['yes', 'no'], epochs=1,"
               " verbose=0)\n"
               "print(history.history['loss'][0])\n"])
    assert fit.returncode == 0, fit.stderr[-3000:]
    assert float(fit.stdout.strip().splitlines()[-1]) > 0
    # What the core leaves out says which extra brings it.
    app = run([str(command), "gui"])
    assert app.returncode == 1 and app.stderr.strip().endswith('pip install "kbert-keras[gui]"')
    torch = run([str(command), "fill-mask", "--model", "demo", "a [MASK]."], KERAS_BACKEND="torch")
    assert torch.returncode == 1 and torch.stderr.strip().endswith('pip install "kbert-keras[torch]"')
