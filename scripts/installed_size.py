"""Installed size of `kbert-keras` and of `kbert-keras[all]`: the files of each one's dependencies.

Reads the requirements in pyproject.toml, follows them through the distributions
installed in this environment (which must hold everything: `pip install -e ".[test]"`)
and adds up the size of every file each distribution installed (its RECORD). kbert's own
files are left out (a few MB). Run from the repository root:

    .venv/bin/python scripts/installed_size.py
"""

import importlib.metadata
import os
import pathlib
import sys
import tomllib

from packaging.requirements import Requirement

ROOT = pathlib.Path(__file__).resolve().parents[1]


def distribution_bytes(distribution):
    paths = (distribution.locate_file(file) for file in distribution.files or [])
    return sum(os.path.getsize(path) for path in paths if os.path.isfile(path))


def dependency_closure(requirements, extras_of_kbert, kbert_name):
    """`{name: distribution}` of everything `requirements` pull in, kbert's extras followed."""
    found = {}
    pending = [(Requirement(text), "") for text in requirements]
    while pending:
        requirement, extra = pending.pop()
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = requirement.name.lower().replace("_", "-")
        if name == kbert_name:
            for kbert_extra in requirement.extras:
                pending += [(Requirement(text), "") for text in extras_of_kbert[kbert_extra]]
            continue
        key = (name, tuple(sorted(requirement.extras)))
        if key in found:
            continue
        try:
            found[key] = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            sys.exit(f"{name} is not installed here; install kbert's test extra first.")
        for text in found[key].requires or []:
            pending += [(Requirement(text), wanted) for wanted in ("", *requirement.extras)]
    return {name: distribution for (name, _), distribution in found.items()}


def installed_sizes():
    """`{label: (bytes, closure)}` for the light install and `[all]`, as README names them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    name = project["name"]
    sizes = {}
    for label, requirements in (
        (name, project["dependencies"]),
        (f"{name}[all]", [*project["dependencies"], f"{name}[all]"]),
    ):
        closure = dependency_closure(requirements, extras, name)
        sizes[label] = (sum(distribution_bytes(item) for item in closure.values()), closure)
    return sizes


def main():
    for label, (total, closure) in installed_sizes().items():
        largest = sorted(closure, key=lambda name: -distribution_bytes(closure[name]))[:3]
        print(f"{label}: {total / 1e9:.2f} GB in {len(closure)} distributions "
              f"(largest: {', '.join(largest)})")


if __name__ == "__main__":
    main()
