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


def _module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_edges(path, modules):
    """The kbert modules that `path` imports, function-level imports included.

    `from package.module import name` is an edge to `package.module.name` when that is a
    module, else to `package.module`; importing a module is no edge to the packages above
    it (Python runs their `__init__` first, which is no cycle).
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = _module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in modules:
                    yield submodule
                elif base in modules:
                    yield base


def module_graph():
    """`{module: {kbert module it imports: [its file]}}`, function-level imports included."""
    modules = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
    graph = {}
    for name, path in modules.items():
        targets = set(_module_edges(path, modules)) - {name}
        graph[name] = {target: [str(path.relative_to(ROOT))] for target in targets}
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


# kbert's packages from the top down (modules right under kbert/ are their own nodes).
# An import may point down the table or stay within its row, never up; the app
# (kbert_gui) sits above all of it, and tests/gui/test_gui_architecture.py orders its parts.
LAYERS = (
    ("cli",),
    ("commands",),
    ("finetuning", "pretraining"),
    ("models",),
    # The task models compile with kbert's optimizer and losses, and answer with its
    # inference verbs.
    ("training", "inference"),
    ("layers", "preprocessing"),
    ("tokenizer", "data", "metrics"),
    ("presets",),
    ("checkpoints",),
    ("architecture",),
    ("__init__", "keras_registry"),
    # What each model class is, as plain data (every layer above reads it).
    ("model_table",),
    ("files", "argument_checks", "platform_support", "lazy_imports", "optional_packages"),
)


def _level(node):
    return next(index for index, row in enumerate(LAYERS) if node in row)


def upward_imports(graph):
    """The edges of a package graph that point up `LAYERS`, as readable lines."""
    return [
        f"{source} -> {target} ({', '.join(sorted(set(files))[:3])})"
        for source, targets in graph.items()
        for target, files in targets.items()
        if _level(target) < _level(source)
    ]


def test_the_layer_table_names_every_package_once():
    nodes = [node for row in LAYERS for node in row]
    assert len(nodes) == len(set(nodes))
    packages = {
        path.parent.name if path.parent != PACKAGE else path.stem
        for path in PACKAGE.rglob("*.py")
        if PACKAGE in (path.parent, path.parent.parent)
    }
    assert packages == set(nodes)


def test_every_import_points_down_the_layers():
    upward = upward_imports(import_graph())
    assert upward == [], "imports that point up the layers:\n  " + "\n  ".join(upward)


def test_the_layer_check_finds_an_upward_import():
    graph = {"files": {"models": ["kbert/files/x.py"]}, "models": {"files": ["kbert/models/y.py"]}}
    assert upward_imports(graph) == ["files -> models (kbert/files/x.py)"]


def test_kbert_never_imports_the_app():
    """The app adds `kbert gui` through an entry point; kbert names it nowhere in code."""
    importers = sorted(
        str(path.relative_to(ROOT))
        for path in PACKAGE.rglob("*.py")
        if any(module.split(".")[0] == "kbert_gui" for module in _imported_modules(path))
    )
    assert importers == []


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
        "import kbert.model_table, kbert.finetuning.search_folder, kbert.training.run_state\n"
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


def test_the_module_graph_sees_function_level_imports():
    graph = module_graph()
    # kbert/models/bert_task.py imports the loader inside `from_preset`.
    assert "kbert.models.preset_loading" in graph["kbert.models.bert_task"]


def test_no_import_cycle_between_kbert_modules():
    """Not even through imports inside functions: a cycle there is a layering mistake
    that only the order of first calls hides."""
    graph = module_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle between kbert modules:\n  " + " -> ".join(cycle)


def test_the_preset_loader_imports_no_model_class():
    """The loader receives the class it builds (`cls.from_preset` passes it down)."""
    imported = set(module_graph()["kbert.models.preset_loading"])
    model_modules = {
        "kbert.models",
        "kbert.models.bert_backbone",
        "kbert.models.bert_task",
        "kbert.models.bert_classifier",
        "kbert.models.bert_masked_lm",
        "kbert.models.bert_pretrainer",
        "kbert.models.bert_question_answerer",
        "kbert.models.bert_token_classifier",
    }
    assert not imported & model_modules, sorted(imported & model_modules)
