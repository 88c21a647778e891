"""The app's colours come from `kbert_gui.widgets.style` alone, which needs no Qt."""

import ast
import pathlib
import re

import pytest

from kbert_gui.widgets import style

ROOT = pathlib.Path(__file__).resolve().parents[3]
APP = ROOT / "gui"
STYLE = APP / "widgets" / "style.py"
COLOR = re.compile(r"#[0-9a-fA-F]{6}(?:[0-9a-fA-F]{2})?\b|palette\(")


def _modules():
    for path in sorted(APP.rglob("*.py")):
        if path != STYLE:
            yield path.relative_to(ROOT), ast.parse(path.read_text(encoding="utf-8"))


def test_no_colour_is_written_outside_the_style_module():
    found = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if COLOR.search(node.value):
                    found.append(f"{name}:{node.lineno} {node.value!r}")
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "QColor":
                # A colour from numbers, QColor(0, 0, 0, 28), is one written here too.
                if any(isinstance(arg, ast.Constant) for arg in node.args):
                    found.append(f"{name}:{node.lineno} QColor({ast.unparse(node.args[0])}, …)")
    assert not found, found


def test_style_sheets_come_from_the_style_module():
    # setStyleSheet("") clears one; any other text is a style sheet written in place.
    found = [
        f"{name}:{node.lineno}"
        for name, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "attr", None) == "setStyleSheet"
        and node.args
        and isinstance(node.args[0], (ast.Constant, ast.JoinedStr))
        and not (isinstance(node.args[0], ast.Constant) and node.args[0].value == "")
    ]
    assert not found, found


def test_the_style_module_imports_no_qt():
    # The tabs' format modules (texts, no widgets) take their colours from it.
    tree = ast.parse(STYLE.read_text(encoding="utf-8"))
    imported = [
        alias.name if isinstance(node, ast.Import) else node.module
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    ]
    assert not [name for name in imported if name.startswith(("PySide6", "shiboken6"))]


def test_colours_and_style_sheets():
    assert style.rgb(style.START_PROBABILITY) == (0x1E, 0x88, 0xE5)
    with pytest.raises(ValueError, match="Received: color='red'"):
        style.rgb("red")
    assert style.text_style("#123456", italic=True, padding="2px") == (
        "color: #123456; font-style: italic; padding: 2px;"
    )
    sheet = style.message_style("errorBanner", style.ERROR)
    assert sheet.startswith("QLabel#errorBanner { color: #8a1c1c;") and "#f5c2c0" in sheet
    assert len(set(style.ENTITY_COLORS)) == len(style.ENTITY_COLORS) == 10
