"""The README's `python` and `bash` blocks run, so an example cannot fail on the model it names.

Every such block runs unless the line above it says why not, as an HTML comment the
reader does not see:

- `<!-- readme-test: skip (reason) -->`: blocks that set up machines, install packages,
  open the app or take the better part of an hour; each names what covers it instead.
- `<!-- readme-test: needs a download of NAME; runs with demo standing in -->`: the
  block runs offline with the bundled `demo` preset placed in the cache under the
  published name NAME, where a download would have put it.

The blocks of each language run in order in one fresh process (a Python one; a `bash -e`
one with this environment's `kbert` first on PATH), on the test's backend, offline
(`HF_HUB_OFFLINE=1`), in a scratch folder that holds a `texts.txt`, with a private cache.
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import keras
import markdown_it
import pytest

from kbert.checkpoints.named_checkpoints import NAMED_CHECKPOINTS
from kbert.presets import resolve_preset

pytestmark = pytest.mark.skipif(
    keras.config.backend() != "jax",
    reason="the README's examples run on its default backend, JAX; every call they make "
    "is tested on every backend",
)

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
LANGUAGES = ("python", "bash")
MARKER = re.compile(r"^<!-- readme-test: (?P<note>.+?) -->$")
SKIP = re.compile(r"^skip \((?P<reason>.+)\)$")
STAND_IN = re.compile(r"^needs a download of (?P<names>[\w., -]+?); runs with demo standing in$")
# What `--file texts.txt` reads in the README's commands.
TEXTS = "The cat sat.\nA dog ran.\n"

# Runs the Python blocks one after another, each in a namespace of its own, saying which
# one it is on first so that a failure points at its line of README.md.
PYTHON_RUNNER = """
import json, sys

for line, code in json.load(open(sys.argv[1], encoding="utf-8")):
    print(f"README.md:{line}", flush=True)
    exec(compile(code, f"README.md:{line}", "exec"), {"__name__": "__readme__"})
"""


def readme_blocks():
    """`(line, language, code, note)` of every python and bash block; `note` None if unmarked."""
    lines = README.read_text(encoding="utf-8").splitlines()
    blocks = []
    for token in markdown_it.MarkdownIt().parse("\n".join(lines)):
        if token.type != "fence" or token.info.strip() not in LANGUAGES:
            continue
        first = token.map[0]
        above = lines[first - 1].strip() if first > 0 else ""
        marker = MARKER.match(above)
        blocks.append((first + 1, token.info.strip(), token.content, marker and marker["note"]))
    return blocks


def _stand_ins(note):
    match = STAND_IN.match(note or "")
    return [name.strip() for name in match["names"].split(",")] if match else []


def test_every_block_runs_or_says_why_not():
    blocks = readme_blocks()
    assert {language for _, language, _, _ in blocks} == set(LANGUAGES), blocks
    for line, _, code, note in blocks:
        if note is not None:
            assert SKIP.match(note) or STAND_IN.match(note), f"README.md:{line}: {note!r}"
        if note is None or STAND_IN.match(note):
            # A published name that the block would download must be stood in for.
            named = {name for name in NAMED_CHECKPOINTS if re.search(rf"\b{name}\b", code)}
            assert named <= set(_stand_ins(note)), f"README.md:{line} downloads {named}"
    running = [block for block in blocks if not SKIP.match(block[3] or "")]
    assert {language for _, language, _, _ in running} == set(LANGUAGES), running


@pytest.fixture
def scratch(tmp_path):
    """The working folder and environment of the README's examples."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "texts.txt").write_text(TEXTS, encoding="utf-8")
    cache = tmp_path / "cache"
    demo = resolve_preset("demo")
    for _, _, _, note in readme_blocks():
        for name in _stand_ins(note):
            if not (cache / name).exists():
                shutil.copytree(demo, cache / name)
    environment = dict(
        os.environ,
        KERAS_BACKEND=keras.config.backend(),
        KBERT_CACHE=str(cache),
        HF_HUB_OFFLINE="1",
        PATH=os.pathsep.join([str(pathlib.Path(sys.executable).parent), os.environ["PATH"]]),
    )
    return folder, environment


def _run(command, folder, environment):
    return subprocess.run(
        command, cwd=folder, env=environment, capture_output=True, text=True, timeout=900
    )


@pytest.mark.slow
def test_the_python_blocks_run(scratch):
    folder, environment = scratch
    blocks = [(line, code) for line, language, code, note in readme_blocks()
              if language == "python" and not SKIP.match(note or "")]
    (folder / "blocks.json").write_text(json.dumps(blocks), encoding="utf-8")
    completed = _run([sys.executable, "-c", PYTHON_RUNNER, "blocks.json"], folder, environment)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-4000:]
    started = re.findall(r"^README\.md:(\d+)$", completed.stdout, flags=re.MULTILINE)
    assert [int(line) for line in started] == [line for line, _ in blocks]
    assert (folder / "sentiment.keras").is_file()  # what the first block saves


@pytest.mark.slow
def test_the_bash_blocks_run(scratch):
    folder, environment = scratch
    blocks = [(line, code) for line, language, code, note in readme_blocks()
              if language == "bash" and not SKIP.match(note or "")]
    script = "set -euo pipefail\n" + "".join(
        f"echo README.md:{line}\n{code}" for line, code in blocks
    )
    completed = _run(["bash", "-c", script], folder, environment)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-4000:]
    started = re.findall(r"^README\.md:(\d+)$", completed.stdout, flags=re.MULTILINE)
    assert [int(line) for line in started] == [line for line, _ in blocks]
    assert (folder / "vectors.npy").is_file() and (folder / "tokens.jsonl").is_file()
