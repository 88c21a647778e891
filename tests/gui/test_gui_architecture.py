"""The shape of the app's code: which of its parts import which, as gui/__init__.py says.

The imports are read from the source (every `import` and `from ... import`, those inside
functions included), not from what happens to be imported at run time, as
tests/test_architecture.py reads kbert's.
"""

import ast
import graphlib
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
APP = ROOT / "gui"
PACKAGE = "kbert_gui"
TABS = ("masked_words", "question_answering", "classify", "fine_tuning")
# What each part may import besides itself (`kbert_gui` is the root package, which holds
# DEFAULT_PRESET). The entry point `app` puts everything together.
ALLOWED = {
    "kbert_gui": set(),
    "tab_key": set(),
    "widgets": set(),
    "services": {"kbert_gui", "tab_key"},
    "evaluation": {"kbert_gui", "widgets", "services"},
    **{tab: {"kbert_gui", "tab_key", "widgets", "services"} for tab in TABS},
    "fine_tuning": {"kbert_gui", "tab_key", "widgets", "services", "evaluation"},
    "runs": {"kbert_gui", "tab_key", "widgets", "services", "fine_tuning"},
    "window": {"kbert_gui", "tab_key", "widgets", "services", "evaluation", *TABS},
    "app": {"kbert_gui", "tab_key", "widgets", "services", "window", "evaluation", "runs", *TABS},
    "__main__": {"app"},
    # `kbert gui`: the app's subcommand of kbert's command line (an entry point).
    "command": {"app"},
}


def _module_name(path):
    """gui/masked_words/masked_words_tab.py -> kbert_gui.masked_words.masked_words_tab."""
    parts = path.relative_to(APP).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((PACKAGE,) + parts)


def _part(module):
    """The part of the app a module belongs to: its sub-package, or itself at the top."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else PACKAGE


class _Imports(ast.NodeVisitor):
    """Every module a file imports, and whether each import runs when the file loads
    (module level and class bodies) or only when a function is called."""

    def __init__(self):
        self.found = []  # (imported module, at import time)
        self._functions = 0

    def visit_FunctionDef(self, node):
        self._functions += 1
        self.generic_visit(node)
        self._functions -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node):
        self.found.extend((alias.name, not self._functions) for alias in node.names)

    def visit_ImportFrom(self, node):
        # The app imports by absolute name only (a relative import would escape this walk).
        assert not node.level, f"a relative import: from {'.' * node.level}{node.module} ..."
        for alias in node.names:
            # `from kbert_gui.widgets import style` imports the module kbert_gui.widgets.style.
            submodule = f"{node.module}.{alias.name}"
            imported = submodule if submodule in _FILES else node.module
            self.found.append((imported, not self._functions))


_FILES = {_module_name(path): path for path in sorted(APP.rglob("*.py"))}


def _imports():
    """`{module: [(app module it imports, at import time)]}` for every module of the app."""
    found = {}
    for module, path in _FILES.items():
        visitor = _Imports()
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        found[module] = [
            (target, eager)
            for target, eager in visitor.found
            if target == PACKAGE or target.startswith(PACKAGE + ".")
        ]
    return found


def _part_edges():
    """`{(part, part it imports): [modules that do]}` between different parts."""
    edges = {}
    for module, targets in _imports().items():
        for target, _ in targets:
            source, destination = _part(module), _part(target)
            if source != destination:
                edges.setdefault((source, destination), []).append(module)
    return edges


def test_the_walk_sees_the_imports():
    edges = _part_edges()
    assert ("masked_words", "services") in edges and ("window", "widgets") in edges
    assert ("app", "window") in edges
    # Function-level imports count too: app.create_window imports the tabs in its body.
    assert ("app", "fine_tuning") in edges
    assert set(ALLOWED) == {_part(module) for module in _FILES}


def test_tabs_never_import_each_other():
    crossings = [
        f"{source} -> {target} ({', '.join(modules)})"
        for (source, target), modules in _part_edges().items()
        if source in TABS and target in TABS
    ]
    assert not crossings, crossings


@pytest.mark.parametrize("part", ["widgets", "services"])
def test_widgets_and_services_import_no_tab_or_window(part):
    wrong = {
        target: modules
        for (source, target), modules in _part_edges().items()
        if source == part and target in (*TABS, "window", "app")
    }
    assert not wrong, wrong


def test_every_part_imports_only_what_gui_init_allows():
    wrong = [
        f"{source} -> {target} ({', '.join(sorted(set(modules)))})"
        for (source, target), modules in sorted(_part_edges().items())
        if target not in ALLOWED[source]
    ]
    assert not wrong, wrong


def test_no_import_cycle_between_modules_at_import_time():
    graph = {
        module: {target for target, eager in targets if eager and target != module}
        for module, targets in _imports().items()
    }
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        raise AssertionError(f"import cycle: {' -> '.join(error.args[1])}") from None


def test_every_package_says_what_it_holds_and_may_import():
    for path in sorted(APP.rglob("__init__.py")):
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        assert "import" in docstring.lower(), f"{path.relative_to(ROOT)}: {docstring[:60]!r}"
