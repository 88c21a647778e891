"""`kbert fill-mask`: the most probable tokens at each [MASK] of one or several texts."""

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
        "fill-mask",
        help="predict the tokens behind [MASK] in texts",
        description=(
            "Predict the most probable tokens at each [MASK] of each TEXT, with their "
            "probabilities and the character offsets of the mask. Texts longer than "
            "the model's limit are truncated with a warning. A long text prints as its "
            "start and each candidate as the text around its mask (--json keeps them whole)."
        ),
        epilog='example: kbert fill-mask --model demo "The [MASK] sat on the mat."',
    )
    add_common_arguments(
        parser,
        texts_help="texts with [MASK]",
        file_help='more texts, one per line ("-" for stdin)',
    )
    parser.add_argument(
        "--top-k", type=int, default=5, metavar="K", help="candidates per mask (default: 5)"
    )
    parser.add_argument(
        "--targets",
        metavar="W1,W2",
        help="comma-separated words to score at each mask instead of the whole "
        "vocabulary (each must be a single vocabulary token)",
    )
    parser.add_argument(
        "--joint",
        action="store_true",
        help="fill several masks one at a time, most confident first",
    )
    parser.set_defaults(run=run)


def run(args):
    from kbert.models import BertMaskedLM

    texts = list(args.texts) + (read_lines(args.file) if args.file else [])
    require_inputs(texts, "texts with [MASK]")
    targets = None
    if args.targets is not None:
        targets = [word.strip() for word in args.targets.split(",") if word.strip()]
    model = load_model(BertMaskedLM, args.model)
    results = map_in_batches(
        lambda batch: model.fill_mask(
            batch,
            top_k=args.top_k,
            targets=targets,
            joint=args.joint,
            batch_size=args.batch_size,
            **engine_options(args),
        ),
        texts,
        args.batch_size,
        "fill-mask",
    )
    for result in results:
        if args.json:
            print_json(result)
            continue
        print(_shortened(result.text))
        for mask in result.masks:
            print(f"  {result.text[mask.start : mask.end]} at {mask.start}:{mask.end}")
            for candidate in mask.candidates:
                shown = _around(result.text, mask, candidate)
                print(f"    {candidate.probability:.4f}  {candidate.token:<15} {shown}")
    return EXIT_OK


# A text longer than this prints as its start, and each candidate as the window of
# CONTEXT_CHARACTERS either side of the filled mask (5,000 words would otherwise repeat
# on every candidate line); --json keeps every text whole.
LONG_TEXT_CHARACTERS = 120
CONTEXT_CHARACTERS = 40


def _shortened(text):
    if len(text) <= LONG_TEXT_CHARACTERS:
        return text
    return f"{_one_line(text[:LONG_TEXT_CHARACTERS])}... ({len(text)} characters)"


def _around(text, mask, candidate):
    """`candidate.text`, or for a long text the window around `mask` with the candidate in it.

    The window is cut from the caller's text, so its offsets hold whatever `--joint`
    filled elsewhere; other masks in it show as `[MASK]`.
    """
    if len(text) <= LONG_TEXT_CHARACTERS:
        return candidate.text
    from kbert.tokenizer.bert_tokenizer import display_token

    left = max(0, mask.start - CONTEXT_CHARACTERS)
    right = min(len(text), mask.end + CONTEXT_CHARACTERS)
    window = text[left : mask.start] + display_token(candidate.token) + text[mask.end : right]
    return ("..." if left > 0 else "") + _one_line(window) + ("..." if right < len(text) else "")


def _one_line(text):
    return " ".join(text.split("\n"))
