"""The size of the app's code: no function over 80 lines, no module over 400 lines unless
its docstring says why it is longer."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
APP = ROOT / "gui"
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 400


def _sources():
    for path in sorted(APP.rglob("*.py")):
        yield path.relative_to(ROOT), path.read_text(encoding="utf-8")


def test_no_function_is_longer_than_80_lines():
    long = []
    for name, source in _sources():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{name}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, long


def test_a_module_longer_than_400_lines_says_why():
    unexplained = [
        f"{name} ({source.count(chr(10))} lines)"
        for name, source in _sources()
        if source.count("\n") > MAX_MODULE_LINES
        and "400 lines" not in (ast.get_docstring(ast.parse(source)) or "")
    ]
    assert not unexplained, unexplained
