"""`kbert finetune --search`: its arguments, and how it prints its trials (one line each,
then the whole table)."""

from kbert.commands.training_progress import format_value
from kbert.finetuning.search_result import table_columns
from kbert.finetuning.search_space import SYNTAX_HELP

# Columns left out of the printed table (they are in the CSV and JSON files).
_UNPRINTED = ("process", "status")


def format_trial(row):
    """One finished trial in one line: its settings and its dev scores."""
    settings = ", ".join(
        f"{key} {format_value(value)}"
        for key, value in row.items()
        if key not in _UNPRINTED and key != "trial"
    )
    return f"trial {row['trial']}: {settings}"


def print_search_result(result):
    """The table of every finished trial, the best one and where everything is."""
    rows = result.trials
    columns = [column for column in table_columns(rows) if column not in _UNPRINTED]
    if rows:
        widths = {
            column: max(len(column), *(len(format_value(row.get(column))) for row in rows))
            for column in columns
        }
        print("  ".join(f"{column:>{widths[column]}}" for column in columns))
        for row in rows:
            cells = (f"{format_value(row.get(column)):>{widths[column]}}" for column in columns)
            print("  ".join(cells))
        print()
    print(f"status: {result.status}, {len(rows)} of {result.total_trials} trials finished "
          f"({result.trials_run} run by this process)")
    if result.best is not None:
        best = result.best
        print(f"best {result.metric}: {format_value(best[result.metric])} (trial {best['trial']}, "
              f"{best['folder']})")
    model = result.preset_path if result.preset_path else "(when every trial has finished)"
    print(f"model: {model}")
    print("table: " + ", ".join(str(path) for path in result.table_paths))
    if result.cancelled:
        print("cancelled: run the same command again to continue the search.")
    elif result.status == "incomplete":
        print("other processes are still running trials; the last to finish keeps the best model.")


def add_search_arguments(parser):
    """`--search`, `--restarts` and `--trials`."""
    search = parser.add_argument_group("search (the paper's fine-tuning procedure)")
    search.add_argument(
        "--search",
        metavar="GRID",
        help="fine-tune once per point of GRID (or --trials times, points drawn from its "
        "ranges), each run in OUTPUT/trials/, the best by the "
        "--eval metric kept as OUTPUT/model, every trial in OUTPUT/search_trials.csv and "
        f".json; GRID is {SYNTAX_HELP}. Run the same command again to resume, or in "
        "several processes at once to share the trials (Optuna, OUTPUT/search.journal)",
    )
    search.add_argument(
        "--restarts",
        type=int,
        default=1,
        metavar="N",
        help="with --search: N runs per grid point, seeds --seed, --seed + 1, ... (default: 1)",
    )
    search.add_argument(
        "--trials",
        type=int,
        metavar="N",
        help="with a --search over ranges: how many points to draw (Optuna's TPE sampler, "
        "each trial guided by the scores of those before it)",
    )
