"""The `kbert` subcommands, one module each (see `kbert.cli`)."""

EXIT_OK = 0
EXIT_ERROR = 1
