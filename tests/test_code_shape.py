"""The shape of the code: short functions, modules of one idea.

No function over 80 lines (docstring included) except the argparse builders
(`add_parser` of each command: one `add_argument` call per option), and no module over
400 lines unless its docstring says why ("Over 400 lines because ...").

Covers kbert/ and gui/.
"""

import ast
import pathlib
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHECKED_FOLDERS = ("kbert", "gui")
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 400
# argparse builders: a flat list of options, longer the more options a command has.
ARGPARSE_BUILDERS = ("add_parser",)
MODULE_LENGTH_REASON = "over 400 lines"


def long_functions(source, name):
    """`"name:line function (N lines)"` for each function of `source` over the limit."""
    found = []
    for node in ast.walk(ast.parse(source, filename=name)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        length = node.end_lineno - node.lineno + 1
        if length > MAX_FUNCTION_LINES and node.name not in ARGPARSE_BUILDERS:
            found.append(f"{name}:{node.lineno} {node.name} ({length} lines)")
    return found


def long_module(source, name):
    """`"name (N lines)"` when `source` is over the limit without the reason, else None."""
    length = len(source.splitlines())
    docstring = ast.get_docstring(ast.parse(source, filename=name)) or ""
    if length > MAX_MODULE_LINES and MODULE_LENGTH_REASON not in docstring.lower():
        return f"{name} ({length} lines)"
    return None


def _sources():
    for folder in CHECKED_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


def test_the_checks_find_what_they_should():
    body = "\n".join(f"    x = {index}" for index in range(MAX_FUNCTION_LINES))
    long_function = f"def long():\n{body}\n\ndef add_parser():\n{body}\n"
    expected = f"m.py:1 long ({MAX_FUNCTION_LINES + 1} lines)"
    assert long_functions(long_function, "m.py") == [expected]
    assert long_functions(f"def fits():\n{body[: body.rindex(chr(10))]}\n", "m.py") == []
    filler = "x = 1\n" * MAX_MODULE_LINES
    too_long = '"""A module."""\n' + filler
    assert long_module(too_long, "m.py") == f"m.py ({MAX_MODULE_LINES + 1} lines)"
    reason = textwrap.dedent('''\
        """A table.

        Over 400 lines because the table is one piece.
        """
        ''')
    assert long_module(reason + filler, "m.py") is None
    assert long_module('"""A module."""\n' + filler[6:], "m.py") is None


def test_no_function_is_over_80_lines():
    found = [entry for name, source in _sources() for entry in long_functions(source, name)]
    assert found == [], "split these along their phases:\n  " + "\n  ".join(found)


def test_no_module_is_over_400_lines_without_its_reason():
    found = [entry for name, source in _sources() if (entry := long_module(source, name))]
    assert found == [], (
        'move coherent parts out, or say "Over 400 lines because ..." at the top:\n  '
        + "\n  ".join(found)
    )
