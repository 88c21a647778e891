"""`kbert evaluate`: score a fine-tuned preset on labelled data with the task's metrics."""

import json

from kbert.commands import EXIT_OK
from kbert.commands import add_model_argument
from kbert.commands.config_arguments import add_config_arguments
from kbert.commands.inference_inputs import add_batch_size_argument
from kbert.commands.task_arguments import add_task_arguments
from kbert.commands.task_arguments import task_from_arguments
from kbert.finetuning.evaluation_predictions import prediction_format
from kbert.finetuning.fine_tuning_config import FineTuningConfig


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "evaluate",
        help="score a fine-tuned model on labelled data",
        description=(
            "Score the preset --model on the labelled --data file: accuracy, macro F1 and "
            "Matthews correlation for (pair-)classification, entity precision, recall and "
            "F1 for token-classification, SQuAD exact match and F1 (percent) for qa, accuracy "
            "for multiple-choice."
        ),
        epilog="example: kbert evaluate --task classification --model runs/sentiment/model "
        "--data test.csv",
    )
    add_task_arguments(parser)
    add_model_argument(parser, "the model to score")
    parser.add_argument("--data", required=True, metavar="FILE", help="labelled data")
    add_config_arguments(parser, FineTuningConfig, fields=("long_texts",))
    add_batch_size_argument(parser)
    parser.add_argument(
        "--predictions",
        metavar="FILE",
        help="also write every example with its gold answer, prediction and probability "
        "to FILE: CSV for a .csv name, JSON Lines for .jsonl",
    )
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.set_defaults(run=run)


def run(args):
    from kbert.commands.inference_inputs import load_model
    from kbert.finetuning.classification_recipe import with_long_texts

    task = with_long_texts(task_from_arguments(args), args.long_texts)
    if args.predictions is not None:
        prediction_format(args.predictions)  # a wrong name fails before the model loads
    examples = task.read(args.data)
    model = load_model(task.model_class, args.model)
    predictions = task.evaluation_predictions(
        model, examples, max_length=args.max_length, batch_size=args.batch_size
    )
    scores = predictions.scores
    if args.predictions is not None:
        predictions.write(args.predictions)
    if args.json:
        print(
            json.dumps(
                {
                    "task": task.name,
                    "model": args.model,
                    "data": args.data,
                    "examples": len(examples),
                    "metrics": scores,
                },
                ensure_ascii=False,
            )
        )
    else:
        width = max(len(name) for name in scores)
        print(f"{task.name} on {args.data} ({len(examples)} examples)")
        for name, value in scores.items():
            print(f"  {name:<{width}}  {value:.4f}")
    return EXIT_OK
