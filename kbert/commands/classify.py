"""`kbert classify`: label probabilities for texts or text pairs."""

import argparse
import dataclasses

from kbert.commands import EXIT_OK
from kbert.commands.inference_inputs import add_common_arguments
from kbert.commands.inference_inputs import engine_options
from kbert.commands.inference_inputs import load_model
from kbert.commands.inference_inputs import map_in_batches
from kbert.commands.inference_inputs import print_json
from kbert.commands.inference_inputs import read_json_lines
from kbert.commands.inference_inputs import read_lines
from kbert.commands.inference_inputs import require_inputs
from kbert.preprocessing.long_text_windows import LONG_TEXT_CHOICES
from kbert.preprocessing.long_text_windows import WINDOW_OVERLAP


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "classify",
        help="classify texts or text pairs",
        description=(
            "Print the most probable label of each TEXT (or text pair) with its "
            "probability; with --json, the probability of every label."
        ),
        epilog='examples: kbert classify "WINNER! Claim your prize: text WIN to 80086"\n'
        '          kbert classify --model runs/sentiment/model "A wonderful film."',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common_arguments(
        parser,
        default_model=("demo-spam", "the bundled spam filter for short messages: spam or ham"),
        texts_help="texts to classify",
        file_help='more texts: one per line, or a .jsonl file of {"text", "pair"} '
        'objects ("pair" optional); "-" reads lines from stdin',
    )
    parser.add_argument(
        "--pair",
        action="append",
        metavar="TEXT",
        help="second text of a pair, once per TEXT argument, in order",
    )
    parser.add_argument(
        "--long-texts",
        choices=LONG_TEXT_CHOICES,
        default=None,
        help="a text longer than the model's limit: 'truncate' cuts it (with a warning); "
        f"'windows' reads it in windows overlapping by {WINDOW_OVERLAP} tokens and averages their "
        "logits. Text pairs are truncated either way (default: the model's setting, "
        "else truncate)",
    )
    parser.set_defaults(run=run)


def _inputs(args):
    """`(texts, pairs)`; pairs is None when no input is a pair."""
    if args.pair and len(args.pair) != len(args.texts):
        raise ValueError(
            f"Give one --pair per TEXT. Received: {len(args.texts)} texts, {len(args.pair)} pairs"
        )
    records = [
        {"text": text, "pair": pair}
        for text, pair in zip(args.texts, args.pair or [None] * len(args.texts))
    ]
    if args.file and args.file.endswith(".jsonl"):
        records += read_json_lines(args.file, ["text"], optional=["pair"])
    elif args.file:
        records += [{"text": line} for line in read_lines(args.file)]
    require_inputs(records, "texts")
    texts = [record["text"] for record in records]
    pairs = [record.get("pair") for record in records]
    if all(pair is None for pair in pairs):
        return texts, None
    if any(pair is None for pair in pairs):
        raise ValueError(
            "Either every input is a text pair or none is. Received "
            f"{pairs.count(None)} texts without a pair among {len(pairs)} inputs."
        )
    return texts, pairs


def run(args):
    from kbert.models import BertClassifier

    texts, pairs = _inputs(args)
    model = load_model(BertClassifier, args.model)
    indices = list(range(len(texts)))
    results = map_in_batches(
        lambda batch: model.classify(
            [texts[index] for index in batch],
            pairs=None if pairs is None else [pairs[index] for index in batch],
            batch_size=args.batch_size,
            long_texts=args.long_texts,
            **engine_options(args),
        ),
        indices,
        args.batch_size,
        "classify",
    )
    for index, result in enumerate(results):
        pair = None if pairs is None else pairs[index]
        if args.json:
            print_json({"text": texts[index], "pair": pair, **dataclasses.asdict(result)})
        else:
            shown = texts[index] if pair is None else f"{texts[index]} ||| {pair}"
            print(f"{result.label}\t{result.probability:.4f}\t{shown}")
    return EXIT_OK
