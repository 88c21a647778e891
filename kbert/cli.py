"""The `kbert` command: argument parsing and printing; the work happens in kbert's API.

Each subcommand is a pair of functions: `_add_<command>(subparsers)` declares its
arguments and sets `run=_run_<command>`; `_run_<command>(args)` imports what it needs
(Keras and the models load lazily, so `kbert --help` stays instant), calls the public
API and prints the result, returning the exit status. A new command is one more pair and
one more entry in `_COMMANDS`.

Errors the user can fix (`ValueError`, a missing optional package, an unreadable file)
are printed as one line on stderr with exit status 1; anything else is a bug and keeps
its traceback.
"""

import argparse
import logging
import sys

import kbert

logger = logging.getLogger("kbert.cli")

EXIT_OK = 0
EXIT_ERROR = 1


# --- kbert convert -------------------------------------------------------------------------


def _add_convert(subparsers):
    parser = subparsers.add_parser(
        "convert",
        help="convert a checkpoint (Hugging Face BERT folder) into a kbert preset",
        description=(
            "Convert the checkpoint folder SRC into a kbert preset folder DST. The format "
            "is detected; a Hugging Face folder (config.json with model.safetensors or "
            "pytorch_model.bin, plus vocab.txt or tokenizer.json) keeps every head its "
            "`architectures` names."
        ),
    )
    parser.add_argument("src", metavar="SRC", help="checkpoint folder to read")
    parser.add_argument("dst", metavar="DST", help="preset folder to write")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace DST if it already holds a kbert preset",
    )
    parser.set_defaults(run=_run_convert)


def _run_convert(args):
    from kbert.checkpoints.convert import convert

    print(convert(args.src, args.dst, overwrite=args.overwrite))
    return EXIT_OK


# Subcommands in `kbert --help` order.
_COMMANDS = (_add_convert,)


# --- Entry point ---------------------------------------------------------------------------


def build_parser():
    """The `kbert` argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="kbert",
        description="BERT on Keras 3 (JAX, TensorFlow, PyTorch).",
    )
    parser.add_argument("--version", action="version", version=f"kbert {kbert.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add_command in _COMMANDS:
        add_command(subparsers)
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
