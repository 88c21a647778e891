"""The `kbert` subcommands, one module each (see `kbert.cli`)."""

EXIT_OK = 0
EXIT_ERROR = 1
# The reader of stdout went away (`kbert fill-mask ... --json | head -1`): the status a
# shell reports for coreutils killed by SIGPIPE (128 + 13), with no message.
EXIT_BROKEN_PIPE = 141

# The help of every argument that names a model: each takes every source
# `kbert.presets.resolve_preset` does.
MODEL_HELP = (
    "a kbert preset folder, a built-in name (demo), a published checkpoint name "
    "(bert-base-uncased, bert-tiny-uncased, ...: see `kbert convert --help`), a Hugging "
    "Face, Google or keras-hub checkpoint folder (converted once into the cache), or "
    "hf://owner/name"
)


def add_model_argument(parser, role):
    """Adds the required option --model, `role` (what the command does with the model)
    leading its help."""
    parser.add_argument("--model", required=True, metavar="MODEL", help=f"{role}: {MODEL_HELP}")


def add_count_argument(parser, flag, default, help):
    """Adds the whole-number option `flag` (metavar N), its default said in its help."""
    parser.add_argument(flag, type=int, default=default, metavar="N", help=f"{help} (default: {default})")
