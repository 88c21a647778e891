"""The shape of the code: arrows between kbert's packages point one way, and the light
parts (task specs, configs, the command line's parser) load no Keras.

The import graph is read from the source (every `import` and `from ... import`,
function-level ones included), not from what happens to be imported at run time.
"""

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kbert"


def _package_of(module):
    """`kbert.finetuning.fine_tuner` -> `finetuning`; a module right under kbert is its own node."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _imported_modules(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    relative_to = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = relative_to.split(".")[: -node.level]
                yield ".".join(base + ([node.module] if node.module else []))
            elif node.module:
                yield node.module


def import_graph():
    """`{package: {package it imports: [the files that do]}}` inside kbert."""
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _package_of(".".join(path.relative_to(ROOT).with_suffix("").parts))
        if source is None or path.parent == PACKAGE:
            source = path.stem  # kbert/cli.py, kbert/argument_checks.py, ...
        for module in _imported_modules(path):
            if not module.startswith("kbert.") and module != "kbert":
                continue
            target = _package_of(module)
            if target is None or target == source:
                continue
            graph.setdefault(source, {}).setdefault(target, []).append(
                str(path.relative_to(ROOT))
            )
    return graph


def find_cycle(graph):
    """One cycle of `graph` as a list of nodes (first == last), or None."""
    state = {}

    def visit(node, trail):
        state[node] = "open"
        for target in sorted(graph.get(node, {})):
            if state.get(target) == "open":
                return trail[trail.index(target) :] + [target]
            if target not in state:
                cycle = visit(target, trail + [target])
                if cycle:
                    return cycle
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node, [node])
            if cycle:
                return cycle
    return None


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b": []}, "b": {"c": []}, "c": {"a": []}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b": []}, "b": {"c": []}}) is None


def test_no_import_cycle_between_kbert_packages():
    graph = import_graph()
    assert "finetuning" in graph and "models" in graph["finetuning"]  # the walk sees imports
    cycle = find_cycle(graph)
    if cycle:
        edges = [
            f"{source} -> {target} ({', '.join(sorted(set(graph[source][target]))[:3])})"
            for source, target in zip(cycle, cycle[1:])
        ]
        raise AssertionError("import cycle between kbert packages:\n  " + "\n  ".join(edges))


def test_the_light_parts_import_no_keras():
    code = (
        "import sys\n"
        "import kbert.architecture.bert_config, kbert.finetuning.task_specs, kbert.training.precisions\n"
        "import kbert.finetuning, kbert.training, kbert.pretraining, kbert.presets\n"
        "from kbert.finetuning import FineTuningConfig, TASK_SPECS\n"
        "from kbert.training import PRECISIONS\n"
        "import kbert.cli\n"
        "kbert.cli.build_parser()\n"
        "heavy = sorted(name for name in ('keras', 'tensorflow', 'jax', 'torch') if name in sys.modules)\n"
        "print(heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
