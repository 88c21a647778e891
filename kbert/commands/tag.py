"""`kbert tag`: entity spans (named entities, ...) in texts."""

from kbert.commands import EXIT_OK
from kbert.commands.inference_inputs import add_common_arguments
from kbert.commands.inference_inputs import engine_options
from kbert.commands.inference_inputs import load_model
from kbert.commands.inference_inputs import map_in_batches
from kbert.commands.inference_inputs import print_json
from kbert.commands.inference_inputs import read_lines
from kbert.commands.inference_inputs import require_inputs


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "tag",
        help="find entity spans in texts",
        description=(
            "Print the entities of each TEXT found by a token-classification model: "
            "label, character offsets, score (mean probability) and text."
        ),
        epilog='example: kbert tag --model runs/ner/model "Ada Lovelace visited Paris."',
    )
    add_common_arguments(
        parser,
        texts_help="texts to tag",
        file_help='more texts, one per line ("-" for stdin)',
    )
    parser.add_argument(
        "--aggregation",
        choices=("first", "average"),
        default="first",
        help="word label from its first sub-word (default, as in training) or the "
        "mean over its sub-words",
    )
    parser.set_defaults(run=run)


def run(args):
    from kbert.models import BertTokenClassifier

    texts = list(args.texts) + (read_lines(args.file) if args.file else [])
    require_inputs(texts, "texts")
    model = load_model(BertTokenClassifier, args.model)
    results = map_in_batches(
        lambda batch: model.tag(
            batch, aggregation=args.aggregation, batch_size=args.batch_size, **engine_options(args)
        ),
        texts,
        args.batch_size,
        "tag",
    )
    for text, spans in zip(texts, results):
        if args.json:
            print_json({"text": text, "entities": spans})
            continue
        print(text)
        for span in spans:
            print(f"  {span.label:<8} {span.start}:{span.end}  {span.score:.4f}  {span.text}")
    return EXIT_OK
