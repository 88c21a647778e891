"""The `kbert` command: argument parsing and printing; the work happens in kbert's API.

Each subcommand is a module in `kbert.commands` with `add_parser(subparsers)`, which
declares its arguments and sets `run=<function>`; that function imports what it needs
(Keras and the models load lazily, so `kbert --help` stays instant), calls the public
API and prints the result, returning the exit status. A new command is one more module
and one more name in `_COMMAND_MODULES`.

Errors the user can fix (`ValueError`, a missing optional package, an unreadable file)
are printed as one line on stderr with exit status 1 (a missing backend or the app:
which `kbert-keras[...]` extra installs it); anything else is a bug and keeps its traceback.
A reader of stdout that goes away (`kbert fill-mask ... --json | head -1`) ends the
command quietly with status 141, as the shell reports for `yes | head -1`.

Unless the environment says otherwise, the commands run on JAX (whatever keras.json
names) and keep JAX's compiled programs on disk, so that a second `kbert fill-mask`
skips compilation; see `BACKEND_EPILOG`.
"""

import argparse
import importlib
import logging
import os
import sys

import kbert

logger = logging.getLogger("kbert.cli")

from kbert.commands import EXIT_BROKEN_PIPE
from kbert.commands import EXIT_ERROR
from kbert.commands.config_arguments import name_flags
from kbert.optional_packages import choose_default_backend


# Subcommands in `kbert --help` order: modules of `kbert.commands`, each with
# `add_parser(subparsers)` that declares its arguments and sets `run=<function>(args)`.
_COMMAND_MODULES = (
    "fill_mask",
    "qa",
    "classify",
    "tag",
    "choose",
    "embed",
    "finetune",
    "evaluate",
    "vocab",
    "create_pretraining_data",
    "pretrain",
    "evaluate_pretraining",
    "convert",
    "export",
    "doctor",
)
# Packages above kbert add subcommands through this entry-point group (the app adds
# `kbert gui`): `add_parser(subparsers)` as the modules above, read from package metadata.
COMMAND_ENTRY_POINTS = "kbert.commands"


# Compiled programs are kept under the kbert cache (see `kbert.checkpoints.named_checkpoints`).
COMPILATION_CACHE_FOLDER = "jax-compilation-cache"

BACKEND_EPILOG = (
    "backend: kbert runs on JAX unless KERAS_BACKEND is set (e.g. KERAS_BACKEND=torch "
    "kbert ...) or ~/.keras/keras.json names a backend other than Keras' default, "
    "TensorFlow; the same in Python after `import kbert`. On JAX, compiled "
    "programs are kept in $KBERT_CACHE/jax-compilation-cache (default: "
    "~/.cache/kbert/jax-compilation-cache), "
    "which makes later runs start faster; set JAX_COMPILATION_CACHE_DIR to use another "
    "folder, or to an empty value to keep nothing."
)


# --- Entry point ---------------------------------------------------------------------------


def build_parser():
    """The `kbert` argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="kbert",
        description="BERT on Keras 3 (JAX, TensorFlow, PyTorch).",
        epilog=BACKEND_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"kbert {kbert.__version__}")
    parser.add_argument(
        "--load-budget",
        metavar="BYTES",
        help=(
            "the most memory one model load may allocate, in bytes or with a unit "
            "(e.g. 32G); checkpoints declaring more are refused before reading. Default: "
            "$KBERT_LOAD_BUDGET, else 8G."
        ),
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in _COMMAND_MODULES:
        importlib.import_module(f"kbert.commands.{name}").add_parser(subparsers)
    _add_installed_commands(subparsers)
    return parser


def _add_installed_commands(subparsers):
    """The subcommands that installed packages declare in `COMMAND_ENTRY_POINTS`."""
    from importlib.metadata import entry_points

    # One subcommand a name: a stale copy of kbert's metadata (an older egg-info in a
    # checkout) declares the same entry again.
    entries = {entry.name: entry for entry in entry_points(group=COMMAND_ENTRY_POINTS)}
    for entry in sorted(entries.values(), key=lambda entry: entry.name):
        try:
            add_parser = entry.load()
        except ImportError as error:  # a plugin whose own packages are missing
            logger.debug("Skipping the subcommand %r: %s", entry.name, error)
            continue
        add_parser(subparsers)


def _configure_logging():
    # kbert's own progress at INFO; other libraries (JAX, TensorFlow, absl) only warn.
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("kbert").setLevel(logging.INFO)


def choose_backend_defaults():
    """Sets KERAS_BACKEND (`kbert.optional_packages.choose_default_backend`) and JAX's
    compilation cache where the user has not.

    The desktop app calls it too (it starts without this module's `main` when run as
    `kbert-gui` or `python -m kbert_gui`).

    Only before Keras and JAX are imported (they read these variables once, at import);
    a caller that already imported them, such as a test calling `main`, keeps its own.
    """
    choose_default_backend()
    if "jax" not in sys.modules:
        from kbert.checkpoints.named_checkpoints import cache_root

        os.environ.setdefault(
            "JAX_COMPILATION_CACHE_DIR", str(cache_root() / COMPILATION_CACHE_FOLDER)
        )
        # JAX only keeps programs that took a second to compile; on a CPU a small
        # model's forward pass compiles in less, and is worth keeping all the same.
        os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")


def main(argv=None):
    """Runs `kbert` with `argv` (default: the process arguments); returns the exit status."""
    _configure_logging()
    args = build_parser().parse_args(argv)
    choose_backend_defaults()
    if args.load_budget is not None:
        from kbert.files.load_budget import BUDGET_VARIABLE
        from kbert.files.load_budget import parse_byte_amount

        try:
            parse_byte_amount(args.load_budget, "--load-budget")
        except ValueError as error:
            print(f"kbert: error: {error}", file=sys.stderr)
            return EXIT_ERROR
        os.environ[BUDGET_VARIABLE] = args.load_budget
    try:
        status = args.run(args)
        return status if _stdout_flushed() else EXIT_BROKEN_PIPE
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (ValueError, ImportError, OSError) as error:
        from kbert.optional_packages import missing_extra_message

        message = missing_extra_message(error) or name_flags(str(error), args)
        print(f"kbert {args.command}: error: {message}", file=sys.stderr)
        return EXIT_ERROR


def _stdout_flushed():
    """Flushes stdout; False (and stdout silenced) when its reader has gone."""
    try:
        sys.stdout.flush()
        return True
    except BrokenPipeError:
        _silence_stdout()
        return False


def _silence_stdout():
    """Points stdout at os.devnull, as Python's documentation of SIGPIPE recommends, so
    that the interpreter's own flush at exit does not meet the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor (a captured stdout)
        pass


if __name__ == "__main__":
    sys.exit(main())
