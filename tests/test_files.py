"""kbert.files on its own: the bounded reader, the load budget and atomic writes."""

import os
import subprocess
import sys

import pytest

from kbert.files import FileRefusedError
from kbert.files import atomic_path
from kbert.files import read_json
from kbert.files import read_lines
from kbert.files import remove_stale_temporaries
from kbert.files.bounded_reader import json_nesting_depth
from kbert.files.load_budget import BUDGET_VARIABLE
from kbert.files.load_budget import check_load_budget
from kbert.files.load_budget import load_budget_bytes
from kbert.files.load_budget import parse_byte_amount


def test_lines_stream_with_every_ending_and_their_numbers(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\rthree\nfour")
    assert list(read_lines(path)) == [
        (1, "one", "\r\n"),
        (2, "two", "\r"),
        (3, "three", "\n"),
        (4, "four", ""),
    ]
    path.write_bytes(b"ok\n\xff\n")
    with pytest.raises(ValueError, match=r"a.txt:2: the file is not valid UTF-8"):
        list(read_lines(path))


def test_json_depth_ignores_brackets_inside_strings(tmp_path):
    assert json_nesting_depth(b'{"a": "[[[[{{{{", "b": [1, [2, {"c": "\\"]]"}]]}') == 4
    path = tmp_path / "config.json"
    path.write_text('{"a": ' + "[" * 65 + "]" * 65 + "}")
    with pytest.raises(FileRefusedError, match="nested 66 levels deep, more than the 64"):
        read_json(path)
    path.write_text('{"a": ' + "[" * 63 + "]" * 63 + "}")
    value, depth = read_json(path)["a"], 1
    while value:
        value, depth = value[0], depth + 1
    assert depth == 63
    path.write_text('{"a": 1,\n "b": }')
    with pytest.raises(ValueError, match=r"config.json:2:7: invalid JSON"):
        read_json(path)


def test_links_are_followed_inside_the_folder_only(tmp_path):
    folder = tmp_path / "model"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "real.json").write_text("{}")
    (folder / "inside.json").symlink_to("sub/real.json")
    (tmp_path / "secret.json").write_text("{}")
    (folder / "outside.json").symlink_to("../secret.json")
    assert read_json(folder / "inside.json") == {}
    assert read_json(folder / "sub" / "real.json", folder=folder) == {}
    with pytest.raises(FileRefusedError, match=r"outside.json'.*secret.json', outside the folder"):
        read_json(folder / "outside.json")
    with pytest.raises(ValueError, match="File not found"):
        read_json(folder / "missing.json")


def test_the_load_budget_is_read_from_the_environment(monkeypatch):
    monkeypatch.delenv(BUDGET_VARIABLE, raising=False)
    assert load_budget_bytes() == 8 * 2**30
    assert parse_byte_amount("1.5G") == 3 * 2**29 and parse_byte_amount("500MiB") == 500 * 2**20
    monkeypatch.setenv(BUDGET_VARIABLE, "1K")
    with pytest.raises(ValueError, match=r"w\.h5: its tensors need 2048 bytes, more than .* 1024"):
        check_load_budget("w.h5", 2048, "its tensors")
    monkeypatch.setenv(BUDGET_VARIABLE, "lots")
    with pytest.raises(ValueError, match="KBERT_LOAD_BUDGET` must be a positive number"):
        load_budget_bytes()


def test_the_budget_flag_reaches_a_load(tmp_path, monkeypatch):
    from model_helpers import TINY

    from kbert.cli import main
    from kbert.models import BertBackbone

    # Recorded, so that the value `main` sets is undone after the test.
    monkeypatch.setenv(BUDGET_VARIABLE, "8G")
    BertBackbone(**TINY).save_to_preset(tmp_path / "preset")
    export = ["export", str(tmp_path / "preset"), str(tmp_path / "hf"), "--format", "huggingface"]
    assert main(["--load-budget", "1K", *export]) == 1
    assert not (tmp_path / "hf").exists()
    monkeypatch.delenv(BUDGET_VARIABLE, raising=False)
    assert main(["--load-budget", "1G", *export]) == 0


def _dead_pid():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_an_atomic_write_removes_dead_writers_temporaries_and_its_own_on_failure(tmp_path):
    target = tmp_path / "state.h5"
    dead = tmp_path / f".state.h5.tmp-{_dead_pid()}"
    dead.write_text("half")
    alive = tmp_path / f".state.h5.tmp-{os.getpid()}-0000"
    alive.write_text("in progress")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as temporary:
            temporary.write_text("partial")
            raise RuntimeError("the writer failed")
    assert sorted(os.listdir(tmp_path)) == [alive.name]
    with atomic_path(target) as temporary:
        temporary.write_text("new")
    assert target.read_text() == "new"
    assert remove_stale_temporaries(target) == []
    assert sorted(os.listdir(tmp_path)) == [alive.name, "state.h5"]


def test_kbert_files_imports_neither_keras_nor_other_kbert_packages():
    code = (
        "import sys, kbert.files; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('keras', 'tensorflow', "
        "'torch', 'jax') or (m.startswith('kbert.') and not m.startswith('kbert.files') "
        "and not m.startswith('kbert.model_table') "
        "and m not in ('kbert.lazy_imports', 'kbert.keras_registry', "
        "'kbert.optional_packages'))))"
    )  # kbert's own __init__: lazy_imports defers everything else, keras_registry names the
    # classes for Keras from the model table (plain data), optional_packages picks JAX
    # where Keras' default is missing; none imports Keras
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
