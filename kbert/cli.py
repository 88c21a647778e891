"""The `kbert` command: argument parsing and printing; the work happens in kbert's API.

Each subcommand is a module in `kbert.commands` with `add_parser(subparsers)`, which
declares its arguments and sets `run=<function>`; that function imports what it needs
(Keras and the models load lazily, so `kbert --help` stays instant), calls the public
API and prints the result, returning the exit status. A new command is one more module
and one more name in `_COMMAND_MODULES`.

Errors the user can fix (`ValueError`, a missing optional package, an unreadable file)
are printed as one line on stderr with exit status 1; anything else is a bug and keeps
its traceback.
"""

import argparse
import importlib
import logging
import sys

import kbert

logger = logging.getLogger("kbert.cli")

from kbert.commands import EXIT_ERROR


# Subcommands in `kbert --help` order: modules of `kbert.commands`, each with
# `add_parser(subparsers)` that declares its arguments and sets `run=<function>(args)`.
_COMMAND_MODULES = (
    "fill_mask",
    "qa",
    "classify",
    "tag",
    "finetune",
    "evaluate",
    "vocab",
    "create_pretraining_data",
    "pretrain",
    "evaluate_pretraining",
    "convert",
    "export",
    "gui",
)


# --- Entry point ---------------------------------------------------------------------------


def build_parser():
    """The `kbert` argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="kbert",
        description="BERT on Keras 3 (JAX, TensorFlow, PyTorch).",
    )
    parser.add_argument("--version", action="version", version=f"kbert {kbert.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in _COMMAND_MODULES:
        importlib.import_module(f"kbert.commands.{name}").add_parser(subparsers)
    return parser


def _configure_logging():
    # kbert's own progress at INFO; other libraries (JAX, TensorFlow, absl) only warn.
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("kbert").setLevel(logging.INFO)


def main(argv=None):
    """Runs `kbert` with `argv` (default: the process arguments); returns the exit status."""
    _configure_logging()
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, ImportError, OSError) as error:
        print(f"kbert {args.command}: error: {error}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
