"""`kbert finetune`: fine-tune a preset on labelled data; `kbert.finetuning.FineTuner` does the work.

The task arguments it shares with `kbert evaluate` are in `kbert.commands.task_arguments`.
"""

import dataclasses
import json
import signal
import sys

from kbert.commands import EXIT_OK
from kbert.commands import add_model_argument
from kbert.commands.search_report import format_trial
from kbert.commands.config_arguments import add_config_arguments
from kbert.commands.config_arguments import config_from_arguments
from kbert.commands.task_arguments import add_task_arguments
from kbert.commands.task_arguments import task_from_arguments
from kbert.commands.search_report import add_search_arguments
from kbert.commands.search_report import print_search_result
from kbert.commands.training_progress import TrainingProgressBar
from kbert.commands.training_progress import format_value
from kbert.finetuning.fine_tuning_config import FineTuningConfig
from kbert.finetuning.task_specs import TASK_SPECS

# Exit status of a run stopped by Ctrl-C (after writing its checkpoint), as shells use.
EXIT_CANCELLED = 130

# The settings in the "training" group: all but max_length, a task argument.
_TRAINING_FIELDS = tuple(
    field.name for field in dataclasses.fields(FineTuningConfig) if field.name != "max_length"
)


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "finetune",
        help="fine-tune a model on labelled data",
        description=(
            "Fine-tune --model on the --train file for a task: "
            + "; ".join(f"{spec.name}: {spec.description}" for spec in TASK_SPECS.values())
            + ". After every epoch the model is scored on --eval and the best one is kept as "
            "a preset in OUTPUT/model (masked-lm: the model after the last step). A "
            "training checkpoint in OUTPUT lets --resume continue an interrupted run; "
            "Ctrl-C stops cleanly after the current batch."
        ),
        epilog="example: kbert finetune --task classification --model bert-tiny-uncased "
        "--train train.csv --eval dev.csv --output runs/sentiment",
    )
    add_task_arguments(parser)
    add_model_argument(parser, "the model to start from")
    parser.add_argument("--train", required=True, metavar="FILE", help="training data")
    parser.add_argument("--eval", metavar="FILE", help="evaluation data, scored after every epoch")
    parser.add_argument(
        "--output", required=True, metavar="DIR", help="folder for the model and the checkpoint"
    )
    training = parser.add_argument_group("training")
    add_config_arguments(training, FineTuningConfig, fields=_TRAINING_FIELDS)
    training.add_argument(
        "--metric",
        choices=TASK_SPECS["classification"].metrics,
        help="(pair-)classification score that picks the best model (default: accuracy)",
    )
    add_run_start_arguments(
        training,
        resume_help="continue the run whose checkpoint is in --output; with more --epochs "
        "than it had, a finished run goes on",
        distributed_note="implies --data-parallel; the first process writes OUTPUT",
    )
    add_search_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(run=run)


def add_run_start_arguments(group, resume_help, distributed_note):
    """Adds the options of a training run's start to `group`, as `kbert finetune` and
    `kbert pretrain` share them: `--resume` or `--overwrite` (one at most) and
    `--distributed` (`distributed_note`: what joining implies, for its help)."""
    start = group.add_mutually_exclusive_group()
    start.add_argument("--resume", action="store_true", help=resume_help)
    start.add_argument(
        "--overwrite",
        action="store_true",
        help="start afresh in an --output that holds a run, deleting it",
    )
    group.add_argument(
        "--distributed",
        action="store_true",
        help=f"JAX: join a multi-process run ({distributed_note}); every process runs the "
        "same command with KERAS_DISTRIBUTION_JOB_ADDRESSES=host:port, "
        "KERAS_DISTRIBUTION_NUM_PROCESSES and KERAS_DISTRIBUTION_PROCESS_ID set, or inside "
        "a cluster JAX detects (SLURM, Open MPI, Cloud TPU)",
    )


def _cancel_on_interrupt(token):
    """First Ctrl-C asks training to stop cleanly; a second one interrupts at once."""

    def handler(signum, frame):
        if token.is_set():
            raise KeyboardInterrupt
        print(
            "\nStopping after this batch and writing a checkpoint (Ctrl-C again to abort)...",
            file=sys.stderr,
        )
        token.cancel()

    try:
        return signal.signal(signal.SIGINT, handler)
    except ValueError:  # Not the main thread: no signal handling there.
        return None


def run(args):
    from kbert.training.cancellation_token import CancellationToken
    from kbert.training import ProgressEvents
    from kbert.training.distribution import initialize_distributed
    from kbert.training.optimization import describe_precision

    if args.distributed and args.search is not None:
        raise ValueError(
            "--search shares its trials between processes by itself: run it without "
            "--distributed (each trial may use --data-parallel)."
        )
    distributed = initialize_distributed(True if args.distributed else None)
    config = config_from_arguments(
        FineTuningConfig, args, data_parallel=args.data_parallel or distributed
    )
    print(f"precision: {describe_precision(config.precision)}", file=sys.stderr)
    token = CancellationToken()
    bar = TrainingProgressBar(
        "pretraining" if TASK_SPECS[args.task].runs_pretraining else "fine-tuning"
    )
    previous_handler = _cancel_on_interrupt(token)
    try:
        runner = _runner(args, config, ProgressEvents(bar), token)
        if args.overwrite and (args.search is not None or TASK_SPECS[args.task].runs_pretraining):
            raise ValueError("--overwrite goes with a fine-tuning run (not masked-lm or --search).")
        options = {"overwrite": True} if args.overwrite else {}
        result = runner.run(args.train, args.eval, resume=args.resume, **options)
    finally:
        if previous_handler is not None:
            signal.signal(signal.SIGINT, previous_handler)
        bar.close()
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    elif args.search is not None:
        print_search_result(result)
    elif hasattr(result, "history"):
        _print_result(result)
    else:
        _print_pretraining_result(result)
    return EXIT_CANCELLED if result.cancelled else EXIT_OK


def _runner(args, config, progress, token):
    """The run of the task: a `FineTuner`, or continued pretraining for masked-lm."""
    if TASK_SPECS[args.task].runs_pretraining:
        from kbert.pretraining import ContinuedPretraining

        if args.patience is not None:
            raise ValueError("--patience is for fine-tuning; masked-lm runs a fixed number of steps.")
        if args.search is not None:
            raise ValueError("--search is for fine-tuning; masked-lm has no dev metric to rank by.")
        settings = config.to_dict()
        if settings.pop("long_texts") != "truncate":
            raise ValueError("--long-texts is for (pair-)classification, not masked-lm.")
        return ContinuedPretraining(args.model, args.output, settings, [progress], token)
    from kbert.finetuning.classification_recipe import with_long_texts

    task = with_long_texts(task_from_arguments(args, metric=args.metric), config.long_texts)
    if args.search is not None:
        from kbert.finetuning import FineTuningSearch

        return _SearchRun(
            FineTuningSearch(
                task, args.model, args.output, args.search, config, args.restarts,
                [progress, _TrialLines()], token, trials=args.trials,
            )
        )
    if args.restarts != 1 or args.trials is not None:
        raise ValueError("--restarts and --trials go with --search.")
    from kbert.finetuning import FineTuner

    return FineTuner(task, args.model, args.output, config, [progress], token)


class _SearchRun:
    """A search run like a single one: `run(train, eval, resume)` (a search always resumes)."""

    def __init__(self, search):
        self.search = search

    def run(self, train, evaluation, resume=False):
        if evaluation is None:
            raise ValueError("--search needs --eval: the dev set ranks the trials.")
        return self.search.run(train, evaluation)


class _TrialLines:
    """Prints one line per finished trial to stderr, beside the progress bars."""

    def on_trial_end(self, row):
        print(format_trial(row), file=sys.stderr)


def _print_pretraining_result(result):
    print(f"status: {result.status} after {result.global_step} batches")
    print(f"model: {result.preset_path if result.preset_path else '(none saved yet)'}")
    print(f"checkpoint: {result.checkpoint_path}")
    for name, metrics in (("training", result.train_metrics), ("evaluation", result.eval_metrics)):
        if metrics:
            print(f"{name}: " + ", ".join(f"{key} {format_value(value)}" for key, value in metrics.items()))
    if result.cancelled:
        print("cancelled: run the same command with --resume to continue.")


def _print_result(result):
    print(f"status: {result.status} after {result.global_step} batches")
    if result.metric is not None:
        print(f"best {result.metric}: {format_value(result.best_metric)} (epoch {result.best_epoch})")
    print(f"model: {result.preset_path if result.preset_path else '(none saved yet)'}")
    print(f"checkpoint: {result.checkpoint_path}")
    if result.devices > 1:
        processes = f" in {result.processes} processes" if result.processes > 1 else ""
        print(f"devices: {result.devices}{processes} (data parallel)")
    if result.history:
        columns = list(result.history[0])
        print()
        print("  ".join(f"{column:>13}" for column in columns))
        for entry in result.history:
            print("  ".join(f"{format_value(entry.get(column)):>13}" for column in columns))
    if result.cancelled:
        print("cancelled: run the same command with --resume to continue.")
