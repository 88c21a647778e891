"""Every install hint names the distribution pyproject.toml declares (`kbert-keras`:
PyPI's `kbert` is another project), and README's figures are the ones the scripts measure."""

import pathlib
import re
import runpy

import pytest

from kbert.optional_packages import DISTRIBUTION
from kbert.optional_packages import install_command

ROOT = pathlib.Path(__file__).resolve().parents[1]
tomllib = pytest.importorskip("tomllib")
# Where users read install hints: the code's messages, the scripts and the documents.
HINT_FILES = sorted([*(ROOT / "kbert").rglob("*.py"), *(ROOT / "gui").rglob("*.py"),
                     *(ROOT / "scripts").glob("*"), ROOT / "README.md", ROOT / "CONTRIBUTING.md"])
# `pip install kbert`, `"kbert[gui]"`: the import name where the distribution belongs.
BARE_NAME = re.compile(r"pip install (\"|')?kbert(?![\w-])|(?<![\w./-])kbert\[")


def _project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_code_names_the_distribution_pyproject_declares():
    assert _project()["name"] == DISTRIBUTION
    assert install_command() == f"pip install {DISTRIBUTION}"
    assert install_command("gui") == f'pip install "{DISTRIBUTION}[gui]"'


def test_no_install_hint_names_the_import_name_as_a_distribution():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in HINT_FILES if path.is_file()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if BARE_NAME.search(line)
    ]
    assert not found, "\n".join(found)


def test_the_readme_installs_the_wheel_pip_builds():
    project = _project()
    wheel = f"{re.sub(r'[-_.]+', '_', project['name'])}-{project['version']}-py3-none-any.whl"
    assert f"dist/{wheel}" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_torch_hint_takes_the_index_the_user_names(monkeypatch):
    monkeypatch.delenv("KBERT_TORCH_INDEX_URL", raising=False)
    assert install_command("torch") == f'pip install "{DISTRIBUTION}[torch]"'
    monkeypatch.setenv("KBERT_TORCH_INDEX_URL", "file:///wheels/cpu")
    assert install_command("torch").endswith("[torch]\" --extra-index-url file:///wheels/cpu")
    assert "--extra-index-url" not in install_command("gui")


def test_the_readme_install_sizes_are_the_measured_ones():
    """Within 5 % of what scripts/installed_size.py measures in this environment (which
    holds the test extras: everything); outside that, rerun the script and update README."""
    measure = runpy.run_path(str(ROOT / "scripts" / "installed_size.py"))["installed_sizes"]
    try:
        sizes = measure()
    except SystemExit as missing:  # an environment without every extra
        pytest.skip(str(missing))
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    for label, (total, _) in sizes.items():
        written = re.search(rf"`{re.escape(label)}`(?: alone)? takes (\d+\.\d+) GB", readme)
        written = written or re.search(rf"and `{re.escape(label)}` (\d+\.\d+) GB", readme)
        assert written, f"README gives no size for {label}"
        assert abs(float(written.group(1)) * 1e9 - total) <= 0.05 * total, (
            f"README: {label} {written.group(1)} GB; measured {total / 1e9:.2f} GB")
