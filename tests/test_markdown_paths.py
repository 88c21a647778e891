"""Every repository path that a tracked Markdown file cites exists.

"Tracked" and "exists" are git's: the files `git ls-files` lists (that are in the working
tree), so a new file counts once it is added; outside a git checkout, every file but
build outputs and environments.

What counts as a citation, read with a CommonMark parser (markdown-it) so that code and
prose are told apart as a reader's renderer tells them:

- in inline code and in code blocks, every whitespace-separated token that starts with a
  top-level entry of the repository (`kbert/`, `benchmarks/`, `pyproject.toml`, ...);
  `<placeholders>`, `$VARIABLES`, `{fields}` and `...` stand for any name, so such a
  token, like a glob, must match at least one file;
- in inline code, a dotted path of the package or the app (`kbert.finetuning.fine_tuner`,
  `kbert.load_task`, `kbert_gui.app`, which lives in gui/): the modules must exist and the
  first name after them must be defined there (read with `ast`, nothing is imported);
- a pytest node id (`tests/test_x.py::test_y`): the file and the test in it;
- a bare script name (`timing.py`, `device_run.sh`) in a Markdown file below the root:
  a file beside it;
- the target of a relative link or image, from the Markdown file's folder.

Anything else (`~/.cache/kbert/<name>`, `runs/sst/model`, `.venv/`) is not a repository
path and is left alone.
"""

import ast
import fnmatch
import functools
import pathlib
import posixpath
import re
import subprocess

import markdown_it
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Installed names of the source folders that are imported under another name.
PACKAGE_FOLDERS = {"kbert": "kbert", "kbert_gui": "gui"}
PLACEHOLDER = re.compile(r"<[^<>\s]+>|\$\{?\w+\}?|\{[^{}\s]*\}|\.\.\.")
DOTTED = re.compile(r"(?<![\w.])(?:kbert|kbert_gui)(?:\.[A-Za-z_]\w*)+(?![\w./-])")
# Punctuation around a token in running text, not part of the path.
STRIP_LEFT = "\"'([{"
STRIP_RIGHT = "\"'),;:.]}"
SCRIPT = re.compile(r"[\w.-]+\.(?:py|sh)")
UNTRACKED = {".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache"}


@functools.cache
def repository_files():
    """The repository's files, relative to ROOT: git's tracked files, or a walk without git."""
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout.decode("utf-8")
        # A tracked file deleted in the working tree is gone for the reader too.
        return tuple(name for name in listing.split("\0") if name and (ROOT / name).exists())
    except (OSError, subprocess.CalledProcessError):
        return tuple(
            path.relative_to(ROOT).as_posix()
            for path in sorted(ROOT.rglob("*"))
            if path.is_file()
            and not any(
                part in UNTRACKED or part.endswith(".egg-info")
                for part in path.relative_to(ROOT).parts
            )
        )


def top_level_prefixes(files):
    """`kbert/` for a folder, `pyproject.toml` for a file: how a citation starts."""
    return tuple(sorted({name.split("/")[0] + ("/" if "/" in name else "") for name in files}))


def exists(path, files):
    """Whether `path` (a file, or a folder with a trailing slash or not) is in `files`."""
    path = path.rstrip("/")
    return path in files or any(name.startswith(path + "/") for name in files)


def matches_pattern(pattern, files):
    pattern = pattern.rstrip("/")
    return any(
        fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(name, pattern + "/*")
        for name in files
    )


def defined_names(path):
    """Names bound at the top level of a Python file: defs, classes, assignments, imports.

    A module with a `__getattr__` (kbert's lazy public names) also counts the identifiers
    written as strings in it: those are the names it hands out on first use.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {
                name.id for target in targets for name in ast.walk(target)
                if isinstance(name, ast.Name)
            }
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    if "__getattr__" in names:
        names |= {
            node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value.isidentifier()
        }
    return names


def dotted_problem(dotted, root):
    """Why `kbert.a.b.name` names no module (and name in it) under `root`, or None."""
    first, *rest = dotted.split(".")
    folder = root / PACKAGE_FOLDERS[first]
    module = folder / "__init__.py"
    for index, part in enumerate(rest):
        if module.name == "__init__.py" and (folder / part / "__init__.py").is_file():
            folder, module = folder / part, folder / part / "__init__.py"
        elif module.name == "__init__.py" and (folder / f"{part}.py").is_file():
            module = folder / f"{part}.py"
        elif part in defined_names(module):
            return None  # a name in the module; what follows it (a method) is not checked
        else:
            cited = ".".join([first, *rest[: index + 1]])
            return f"no module or name {cited} ({module.relative_to(root)} has no {part!r})"
    return None


def node_id_problem(node_id, files, root):
    """Why `tests/test_x.py::test_y` names no test, or None."""
    path, *names = node_id.split("::")
    if path not in files:
        return f"no file {path}"
    defined = defined_names(root / path)
    name = re.sub(r"\[.*\]$", "", names[0])
    return None if name in defined else f"{path} has no test {name}"


def path_problem(token, files, root=ROOT):
    """Why the citation `token` is not in the repository, or None when it is (or is no path)."""
    token = token.lstrip(STRIP_LEFT)
    # Closing punctuation of the sentence, but not the `]` of a parametrized test's id.
    while token.endswith(tuple(STRIP_RIGHT)) and not (
        token.endswith("]") and token.count("[") >= token.count("]")
    ):
        token = token[:-1]
    if "=" in token:
        token = token.rsplit("=", 1)[1]  # VARIABLE=value or --option=value
    if not token.startswith(top_level_prefixes(files)):
        return None
    if "::" in token:
        return node_id_problem(token, files, root)
    token = re.sub(r":\d+$", "", token)  # file:line
    pattern = PLACEHOLDER.sub("*", token)
    if any(character in pattern for character in "*?["):
        return None if matches_pattern(pattern, files) else f"nothing matches {token}"
    return None if exists(token, files) else f"no such path {token}"


def link_problem(target, markdown_file, files):
    """Why a relative link's target is missing, or None (also for URLs and anchors)."""
    if re.match(r"[a-z][a-z0-9+.-]*:|#", target):
        return None
    folder = posixpath.dirname(markdown_file)
    path = posixpath.normpath(posixpath.join(folder, target.split("#")[0]))
    if path.startswith(".."):
        return f"link out of the repository {target}"
    return None if exists(path, files) else f"link to missing {target}"


def sibling_problem(token, markdown_file, files):
    """Why a bare `script.py` or `script.sh` cited below the root is not beside the file."""
    folder = posixpath.dirname(markdown_file)
    if not folder:
        return None
    return None if f"{folder}/{token}" in files else f"no {token} beside {markdown_file}"


def citations(text):
    """(line, kind, value) for each code token, inline-code span and link of a Markdown text.

    kind is "code" (a token of a code block or of inline code), "dotted" (inline code
    that may be a dotted module path), "script" (inline code that is a bare script name)
    or "link".
    """
    found = []
    for block in markdown_it.MarkdownIt("commonmark").parse(text):
        line = block.map[0] + 1 if block.map else 0
        if block.type in ("fence", "code_block"):
            found += [(line, "code", token) for token in block.content.split()]
        for child in block.children or ():
            if child.type == "code_inline":
                found += [(line, "code", token) for token in child.content.split()]
                if SCRIPT.fullmatch(child.content):
                    found.append((line, "script", child.content))
                found += [(line, "dotted", match) for match in DOTTED.findall(child.content)]
            elif child.type in ("link_open", "image"):
                found.append((line, "link", child.attrs.get("href") or child.attrs.get("src")))
    return found


def problems(markdown_file, text, files, root=ROOT):
    """'file:line: why' for every citation of `text` that is not in the repository."""
    reported = []
    for line, kind, value in citations(text):
        if kind == "code":
            problem = path_problem(value, files, root)
        elif kind == "script":
            problem = sibling_problem(value, markdown_file, files)
        elif kind == "dotted":
            problem = dotted_problem(value, root)
        else:
            problem = link_problem(value, markdown_file, files)
        if problem:
            reported.append(f"{markdown_file}:{line}: {problem}")
    return reported


def markdown_files():
    return [name for name in repository_files() if name.endswith(".md")]


def test_the_repository_has_markdown_files_and_top_level_entries():
    assert {"README.md", "benchmarks/NOTES.md"} <= set(markdown_files())
    assert {"kbert/", "tests/", "benchmarks/", "pyproject.toml"} <= set(
        top_level_prefixes(repository_files())
    )


@pytest.mark.parametrize("markdown_file", markdown_files())
def test_every_cited_repository_path_exists(markdown_file):
    text = (ROOT / markdown_file).read_text(encoding="utf-8")
    found = problems(markdown_file, text, repository_files())
    assert not found, "stale citations:\n" + "\n".join(found)


# --- What counts as a citation ----------------------------------------------------------------

FILES = (
    "README.md",
    "pyproject.toml",
    "kbert/__init__.py",
    "kbert/cli.py",
    "kbert/layers/__init__.py",
    "kbert/layers/attention_dispatch.py",
    "gui/__init__.py",
    "gui/app.py",
    "tests/test_layers.py",
    "docs/build.sh",
    "docs/guide.md",
    "docs/picture.png",
)
SOURCES = {
    "kbert/__init__.py": "VERSION = '1'\nNAMES = {'kbert.models': ('load_task',)}\n"
    "def __getattr__(name):\n    pass\n",
    "kbert/cli.py": "def main():\n    pass\n",
    "kbert/layers/__init__.py": (
        "from kbert.layers.attention_dispatch import dot_product_attention\n"
    ),
    "kbert/layers/attention_dispatch.py": "def dot_product_attention():\n    pass\n",
    "gui/__init__.py": "",
    "gui/app.py": "def main():\n    pass\n",
    "tests/test_layers.py": "def test_pooler():\n    pass\n",
}


@pytest.fixture
def fake_repository(tmp_path):
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(SOURCES.get(name, ""), encoding="utf-8")
    return tmp_path


def test_citations_that_exist_pass(fake_repository):
    text = """
Run `bash kbert/cli.py` or read `kbert/layers/` and `kbert/layers/*.py`, `pyproject.toml`,
`kbert/<module>.py`, `kbert/$NAME`, `kbert/layers/...`, `kbert/cli.py:12`, `--file=README.md`,
`tests/test_layers.py::test_pooler[tiny]`, `kbert.layers.attention_dispatch`,
`kbert.load_task(source)`, `kbert.cli:main`, `kbert_gui.app.main`,
`kbert.layers.dot_product_attention`. Not repository paths: `~/.cache/kbert/<name>`,
`assets/demo/` (no such top level here), `runs/sst/model`, `.venv/`, `kbert fill-mask`,
`keras.ops.dot_product_attention`, [a page](https://example.com/kbert/missing), [here](#kbert).

```bash
python kbert/cli.py --output runs/x   # writes kbert/layers/
```

    python gui/app.py

![a picture](picture.png) [the guide](guide.md#section) [up](../README.md), `build.sh`
beside it; in code a bare name is no citation:

    python render.py
"""
    assert problems("README.md", "`top_level.py` is no citation.", FILES, fake_repository) == []
    assert problems("docs/guide.md", text, FILES, fake_repository) == []


def test_stale_citations_are_reported_with_their_line(fake_repository):
    text = """# Title

`kbert/tasks/optimization.py` and (`kbert/demo.py`), globbed `kbert/*.txt`, `kbert/<name>/x.py`,
`tests/test_layers.py::test_gone`, `tests/test_gone.py::test_pooler`,
`kbert.tasks.fine_tuner`, `kbert.layers.gone_function`, `kbert_gui.window`.

```bash
bash kbert/build_demo_model.sh   # writes kbert/demo/
```

    python gui/gone.py

[missing](missing.md) ![missing picture](pictures/x.png) `render.py` (beside it)
"""
    assert problems("docs/guide.md", text, FILES, fake_repository) == [
        "docs/guide.md:3: no such path kbert/tasks/optimization.py",
        "docs/guide.md:3: no such path kbert/demo.py",
        "docs/guide.md:3: nothing matches kbert/*.txt",
        "docs/guide.md:3: nothing matches kbert/<name>/x.py",
        "docs/guide.md:3: tests/test_layers.py has no test test_gone",
        "docs/guide.md:3: no file tests/test_gone.py",
        "docs/guide.md:3: no module or name kbert.tasks (kbert/__init__.py has no 'tasks')",
        "docs/guide.md:3: no module or name kbert.layers.gone_function "
        "(kbert/layers/__init__.py has no 'gone_function')",
        "docs/guide.md:3: no module or name kbert_gui.window (gui/__init__.py has no 'window')",
        "docs/guide.md:7: no such path kbert/build_demo_model.sh",
        "docs/guide.md:7: no such path kbert/demo/",
        "docs/guide.md:11: no such path gui/gone.py",
        "docs/guide.md:13: link to missing missing.md",
        "docs/guide.md:13: link to missing pictures/x.png",
        "docs/guide.md:13: no render.py beside docs/guide.md",
    ]
