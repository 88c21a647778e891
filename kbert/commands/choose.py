"""`kbert choose`: the most probable ending of a context (multiple choice, SWAG)."""

from kbert.commands import EXIT_OK
from kbert.commands.inference_inputs import add_common_arguments
from kbert.commands.inference_inputs import engine_options
from kbert.commands.inference_inputs import load_model
from kbert.commands.inference_inputs import map_in_batches
from kbert.commands.inference_inputs import print_json


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "choose",
        help="pick the most probable ending of a context (multiple choice)",
        description=(
            "Score each ENDING as the continuation of --context with a multiple-choice "
            "model and print every ending's probability, the chosen one marked with *; "
            "with --json, one object with the probabilities, the chosen index and ending."
        ),
        epilog='example: kbert choose --model runs/swag/model --context "She opened the '
        'door." "and walked out." "the banana sang."',
    )
    add_common_arguments(
        parser,
        texts_help="the candidate endings of --context (at least two)",
        file_help="more contexts with their endings: a SWAG CSV (sent1, sent2, ending0, "
        '...) or a .jsonl file of {"context", "endings"} objects',
    )
    parser.add_argument("--context", metavar="TEXT", help="the context the endings continue")
    parser.set_defaults(run=run)


def _inputs(args):
    """`(contexts, endings)`: the command line's example, then the file's."""
    from kbert.data import read_multiple_choice

    contexts, endings = [], []
    if args.context is not None or args.texts:
        if args.context is None or len(args.texts) < 2:
            raise ValueError(
                "Give --context and at least two ENDING arguments. Received: "
                f"context={args.context!r}, {len(args.texts)} ending(s)"
            )
        contexts.append(args.context)
        endings.append(list(args.texts))
    if args.file:
        for example in read_multiple_choice(args.file, label_column=None):
            contexts.append(example.context)
            endings.append(list(example.endings))
    if not contexts:
        raise ValueError("Nothing to choose from: give --context with ENDINGs, or --file.")
    return contexts, endings


def run(args):
    from kbert.models import BertMultipleChoice

    contexts, endings = _inputs(args)
    model = load_model(BertMultipleChoice, args.model)
    results = map_in_batches(
        lambda batch: model.choose(
            [contexts[index] for index in batch],
            [endings[index] for index in batch],
            batch_size=args.batch_size,
            **engine_options(args),
        ),
        list(range(len(contexts))),
        args.batch_size,
        "choose",
    )
    for context, result in zip(contexts, results):
        if args.json:
            print_json({"context": context, **_result_fields(result)})
            continue
        print(context)
        for index, (ending, probability) in enumerate(zip(result.endings, result.probabilities)):
            mark = "*" if index == result.index else " "
            print(f"{mark} {index}\t{probability:.4f}\t{ending}")
    return EXIT_OK


def _result_fields(result):
    return {
        "index": result.index,
        "ending": result.ending,
        "probability": result.probability,
        "endings": list(result.endings),
        "probabilities": list(result.probabilities),
    }
