"""Every model name the README, the docstrings and `--help` use resolves (offline).

Names are collected where a model is asked for (`--model X`, `from_preset("X")`,
`kbert convert X`, ...). A bare name must be a built-in preset or a published checkpoint;
`hf://` and `kaggle://` handles must resolve; anything written as a path is the reader's
own folder and is left alone. The cache is pre-filled with a tiny preset for each name, so
the test never downloads.
"""

import pathlib
import re
import shutil

import pytest

from model_helpers import TINY
from kbert.checkpoints.named_checkpoints import is_checkpoint_name
from kbert.checkpoints.named_checkpoints import named_checkpoint
from kbert.cli import build_parser
from kbert.models import BertBackbone
from kbert.models import BertPretrainer
from kbert.presets import BUILTIN_PRESETS
from kbert.presets import resolve_preset
from kbert.presets.model_source import HUGGINGFACE_FOLDER
from kbert.presets.model_source import KAGGLE_FOLDER

ROOT = pathlib.Path(__file__).resolve().parents[1]
_NAME = r"""([^\s"'`),\]]+)"""
PATTERNS = (
    # Options count on a command line only (prose says "--model names another").
    re.compile(r"kbert [^\n]*?--model[ =]" + _NAME),
    re.compile(r"kbert [^\n]*?--init-from[ =]" + _NAME),
    re.compile(r"""(?:from_preset|load_task|resolve_preset)\(\s*["']([^"']+)["']"""),
    re.compile(r"kbert (?:convert|export) " + _NAME),
    re.compile(r"""FineTuner\(\s*["'][^"']+["'],\s*["']([^"']+)["']"""),
)


def _help_texts():
    parser = build_parser()
    texts = [parser.format_help()]
    for action in parser._subparsers._group_actions:
        texts.extend(subparser.format_help() for subparser in action.choices.values())
    return texts


def _documents():
    yield "README.md", (ROOT / "README.md").read_text(encoding="utf-8")
    for folder in ("kbert", "gui"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")
    for index, text in enumerate(_help_texts()):
        yield f"--help #{index}", text


def documented_names():
    found = {}
    for where, text in _documents():
        for pattern in PATTERNS:
            for match in pattern.finditer(text):
                name = match.group(1).rstrip(".:;")
                if re.fullmatch(r"[A-Z_]+|[{$\[-].*", name) or "{" in name:
                    continue  # a metavar, an f-string field or an option
                found.setdefault(name, where)
    return found


def _is_folder_placeholder(name):
    if name.startswith(("hf://", "kaggle://")) or is_checkpoint_name(name):
        return False
    # A `.keras` file is the reader's own, like a folder.
    return "/" in name or name.startswith((".", "~")) or name.endswith(".keras")


def test_the_collection_finds_the_names_it_should():
    names = documented_names()
    for expected in ("demo", "bert-base-uncased", "bert-tiny-uncased"):
        assert expected in names
    assert _is_folder_placeholder("runs/sst/model")
    assert not _is_folder_placeholder("google-bert/bert-base-uncased")
    assert _is_folder_placeholder("sentiment.keras")


def test_every_documented_model_name_resolves(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("KBERT_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    tiny = tmp_path / "tiny"
    BertPretrainer(BertBackbone(**TINY)).save_to_preset(tiny)

    def prefill(folder):
        if not folder.exists():
            shutil.copytree(tiny, folder)
        return folder

    unknown = []
    for name, where in sorted(documented_names().items()):
        if _is_folder_placeholder(name):
            continue
        if name.startswith("hf://"):
            expected = prefill(cache / HUGGINGFACE_FOLDER / pathlib.Path(name[len("hf://") :]))
        elif name.startswith("kaggle://"):
            expected = prefill(cache / KAGGLE_FOLDER / pathlib.Path(name[len("kaggle://") :]))
        elif name in BUILTIN_PRESETS:
            expected = pathlib.Path(BUILTIN_PRESETS[name])
        elif is_checkpoint_name(name):
            expected = prefill(cache / named_checkpoint(name).name)
        else:
            unknown.append(f"{name!r} (in {where})")
            continue
        assert resolve_preset(name) == expected, (name, where)
    assert not unknown, "names that resolve nowhere: " + ", ".join(unknown)


@pytest.mark.parametrize("name", ["bert-tiny", "my-classifier"])
def test_a_bare_unknown_name_would_be_caught(name):
    assert not _is_folder_placeholder(name) and not is_checkpoint_name(name)
