"""kbert as an installed package: the wheel holds the built-in presets, the app under
kbert's own name, the licence and the type marker, and works outside the checkout."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import keras
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
tomllib = pytest.importorskip("tomllib")


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


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
    (wheel,) = (folder / "dist").glob("kbert-*.whl")
    return wheel


@pytest.mark.slow
def test_wheel_installs_and_runs_the_demo_outside_the_checkout(tmp_path):
    wheel = _build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    assert "kbert/presets/builtin/demo/model.weights.h5" in names
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
