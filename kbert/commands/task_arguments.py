"""The task arguments of `kbert finetune` and `kbert evaluate`: `--task` and how to read its data."""

from kbert.commands.config_arguments import add_config_arguments
from kbert.data.question_windowing import QuestionWindowing
from kbert.finetuning.fine_tuning_config import FineTuningConfig
from kbert.finetuning.task_specs import TASK_NAMES


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
        help="(pair-)classification and multiple-choice: column of the label (default: "
        "label)",
    )
    data.add_argument(
        "--context-column",
        metavar="C",
        help="multiple-choice: CSV column of the context (default: sent1, as SWAG)",
    )
    data.add_argument(
        "--start-column",
        metavar="C",
        help="multiple-choice: CSV column that every ending continues (default: sent2, "
        "as SWAG); --start-column '' when the ending columns hold whole endings",
    )
    data.add_argument(
        "--format",
        choices=("csv", "tsv", "jsonl"),
        help="(pair-)classification and multiple-choice file format (default: from the "
        "extension)",
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
        help="qa: context tokens between the starts of consecutive windows "
        f"(default: {QuestionWindowing().doc_stride})",
    )
    add_config_arguments(data, FineTuningConfig, fields=("max_length",))

def _column(value):
    return int(value) if value is not None and value.isdigit() else value


def task_from_arguments(args, metric=None):
    """The `FineTuningRecipe` the arguments describe."""
    from kbert.finetuning import make_recipe

    if args.task != "multiple-choice" and (
        args.context_column is not None or args.start_column is not None
    ):
        raise ValueError("--context-column and --start-column are for --task multiple-choice.")
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
        return make_recipe(args.task, **options)
    choice_columns = {
        name: value
        for name, value in (
            ("context_column", args.context_column),
            ("start_column", args.start_column),
            ("label_column", args.label_column),
        )
        if value is not None
    }
    if args.task == "multiple-choice":
        return make_recipe(args.task, format=args.format, metric=metric, **choice_columns)
    if args.task == "token-classification":
        return make_recipe(args.task, token_column=args.token_column, tag_column=args.tag_column)
    if args.task == "qa":
        windowing = None
        if args.doc_stride is not None:
            # The window length is the run's --max-length (the recipe's rule).
            windowing = QuestionWindowing(max_length=None, doc_stride=args.doc_stride)
        return make_recipe(args.task, windowing=windowing)
    # A task a package registered: the column options given, which its recipe must take.
    return make_recipe(
        args.task,
        text_column=_column(args.text_column),
        pair_column=_column(args.pair_column),
        label_column=_column(args.label_column),
        format=args.format,
        metric=metric,
    )
