"""`kbert finetune`: fine-tune a preset on labelled data; `kbert.tasks.FineTuner` does the work.

Also home of the task arguments `kbert evaluate` shares (`add_task_arguments`,
`task_from_arguments`).
"""

import json
import signal
import sys

from kbert.commands import EXIT_OK
from kbert.commands import MODEL_HELP

# Exit status of a run stopped by Ctrl-C (after writing its checkpoint), as shells use.
EXIT_CANCELLED = 130

# As `kbert.tasks.TASK_NAMES` and `PRECISIONS`, spelled out so that `--help` does not
# import Keras.
TASK_NAMES = ("classification", "pair-classification", "token-classification", "qa")
PRECISIONS = ("auto", "float32", "mixed_float16", "mixed_bfloat16")
PRECISION_HELP = "auto: mixed_bfloat16 on a GPU or TPU, float32 on a CPU (default: auto)"


def add_task_arguments(parser):
    """`--task` and the options that say how to read its data."""
    parser.add_argument("--task", required=True, choices=TASK_NAMES, help="the task")
    data = parser.add_argument_group("data columns")
    data.add_argument(
        "--text-column",
        metavar="C",
        help="(pair-)classification: column or JSON key of the text (default: text); "
        "a number is a 0-based position in a CSV/TSV file without header",
    )
    data.add_argument(
        "--pair-column",
        metavar="C",
        help="pair-classification: column of the second text (default: pair)",
    )
    data.add_argument(
        "--label-column",
        metavar="C",
        help="(pair-)classification: column of the label (default: label)",
    )
    data.add_argument(
        "--format",
        choices=("csv", "tsv", "jsonl"),
        help="classification file format (default: from the extension)",
    )
    data.add_argument(
        "--token-column",
        type=int,
        metavar="N",
        help="token-classification: CoNLL column of the word (default: 0)",
    )
    data.add_argument(
        "--tag-column",
        type=int,
        metavar="N",
        help="token-classification: CoNLL column of the tag (default: -1)",
    )
    data.add_argument(
        "--doc-stride",
        type=int,
        metavar="N",
        help="qa: context tokens between the starts of consecutive windows (default: 128)",
    )
    data.add_argument(
        "--max-length",
        type=int,
        metavar="N",
        help="longest input in tokens (default: the model's limit); longer texts are "
        "truncated with a warning, QA contexts are split into windows",
    )


def _column(value):
    return int(value) if value is not None and value.isdigit() else value


def task_from_arguments(args, metric=None):
    """The `FineTuningTask` the arguments describe."""
    from kbert.tasks import make_task

    if args.task in ("classification", "pair-classification"):
        options = dict(
            text_column=_column(args.text_column),
            label_column=_column(args.label_column),
            format=args.format,
            metric=metric,
        )
        if args.task == "pair-classification":
            options["pair_column"] = _column(args.pair_column)
        elif args.pair_column is not None:
            raise ValueError("--pair-column is for --task pair-classification.")
        return make_task(args.task, **options)
    if args.task == "token-classification":
        return make_task(args.task, token_column=args.token_column, tag_column=args.tag_column)
    return make_task(args.task, doc_stride=args.doc_stride)


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "finetune",
        help="fine-tune a model on labelled data",
        description=(
            "Fine-tune the preset --model on the labelled --train file for a task: "
            "classification and pair-classification (CSV, TSV or JSON Lines), "
            "token-classification (CoNLL) or qa (SQuAD v1.1/v2.0 JSON). After every epoch "
            "the model is scored on --eval and the best one is kept as a preset in "
            "OUTPUT/model. A training checkpoint in OUTPUT lets --resume continue an "
            "interrupted run; Ctrl-C stops cleanly after the current batch."
        ),
        epilog="example: kbert finetune --task classification --model bert-tiny-uncased "
        "--train train.csv --eval dev.csv --output runs/sentiment",
    )
    add_task_arguments(parser)
    parser.add_argument(
        "--model", required=True, metavar="MODEL", help=f"the model to start from: {MODEL_HELP}"
    )
    parser.add_argument("--train", required=True, metavar="FILE", help="training data")
    parser.add_argument("--eval", metavar="FILE", help="evaluation data, scored after every epoch")
    parser.add_argument(
        "--output", required=True, metavar="DIR", help="folder for the model and the checkpoint"
    )
    training = parser.add_argument_group("training")
    training.add_argument("--epochs", type=int, default=3, metavar="N", help="default: 3")
    training.add_argument("--batch-size", type=int, default=32, metavar="N", help="default: 32")
    training.add_argument(
        "--learning-rate",
        type=float,
        default=5e-5,
        metavar="LR",
        help="peak learning rate (default: 5e-5)",
    )
    training.add_argument(
        "--warmup-ratio",
        type=float,
        default=0.1,
        metavar="R",
        help="share of linear warm-up (default: 0.1)",
    )
    training.add_argument(
        "--weight-decay",
        type=float,
        default=0.01,
        metavar="W",
        help="AdamW weight decay (default: 0.01)",
    )
    training.add_argument(
        "--gradient-accumulation",
        type=int,
        default=1,
        metavar="N",
        help="batches per optimiser update (default: 1)",
    )
    training.add_argument(
        "--clip-norm",
        type=float,
        default=1.0,
        metavar="X",
        help="clip the global gradient norm to X; 0 turns clipping off (default: 1.0)",
    )
    training.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="auto",
        help=PRECISION_HELP,
    )
    training.add_argument(
        "--patience", type=int, metavar="N", help="stop after N epochs without a better score"
    )
    training.add_argument(
        "--metric",
        choices=("accuracy", "macro_f1", "matthews_corrcoef"),
        help="(pair-)classification score that picks the best model (default: accuracy)",
    )
    training.add_argument("--seed", type=int, default=0, metavar="N", help="default: 0")
    training.add_argument(
        "--checkpoint-every",
        type=int,
        default=500,
        metavar="N",
        help="write a training checkpoint every N batches, besides every epoch (default: 500)",
    )
    training.add_argument(
        "--resume", action="store_true", help="continue the run whose checkpoint is in --output"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(run=run)


class _ProgressBar:
    """A tqdm bar on stderr over all the batches of the run; epoch scores above it."""

    def __init__(self):
        self.bar = None

    def on_train_begin(self, total_steps):
        from tqdm import tqdm

        self.bar = tqdm(total=total_steps, desc="fine-tuning", unit="batch", file=sys.stderr)

    def on_step(self, step, logs):
        self.bar.update(step - self.bar.n)
        if logs.get("loss") is not None:
            self.bar.set_postfix(epoch=logs["epoch"], loss=f"{logs['loss']:.4f}", refresh=False)

    def on_epoch_end(self, epoch, logs):
        scores = ", ".join(
            f"{key} {_format(value)}" for key, value in logs.items() if key != "epoch"
        )
        self.bar.write(f"epoch {epoch}: {scores}", file=sys.stderr)

    def on_train_end(self, result):
        if self.bar is not None:
            self.bar.close()


def _format(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)


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
    from kbert.tasks import CancellationToken
    from kbert.tasks import FineTuner
    from kbert.tasks import FineTuningConfig
    from kbert.tasks.optimization import describe_precision

    task = task_from_arguments(args, metric=args.metric)
    config = FineTuningConfig(
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        warmup_ratio=args.warmup_ratio,
        weight_decay=args.weight_decay,
        gradient_accumulation_steps=args.gradient_accumulation,
        clip_norm=args.clip_norm or None,
        precision=args.precision,
        max_length=args.max_length,
        patience=args.patience,
        seed=args.seed,
        checkpoint_every=args.checkpoint_every,
    )
    print(f"precision: {describe_precision(config.precision)}", file=sys.stderr)
    token = CancellationToken()
    tuner = FineTuner(
        task, args.model, args.output, config, callbacks=[_ProgressBar()], cancellation=token
    )
    previous_handler = _cancel_on_interrupt(token)
    try:
        result = tuner.run(args.train, args.eval, resume=args.resume)
    finally:
        if previous_handler is not None:
            signal.signal(signal.SIGINT, previous_handler)
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        _print_result(result)
    return EXIT_CANCELLED if result.cancelled else EXIT_OK


def _print_result(result):
    print(f"status: {result.status} after {result.global_step} batches")
    if result.metric is not None:
        print(f"best {result.metric}: {_format(result.best_metric)} (epoch {result.best_epoch})")
    print(f"model: {result.preset_path if result.preset_path else '(none saved yet)'}")
    print(f"checkpoint: {result.checkpoint_path}")
    if result.history:
        columns = list(result.history[0])
        print()
        print("  ".join(f"{column:>13}" for column in columns))
        for entry in result.history:
            print("  ".join(f"{_format(entry.get(column)):>13}" for column in columns))
    if result.cancelled:
        print("cancelled: run the same command with --resume to continue.")
