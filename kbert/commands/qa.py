"""`kbert qa`: answer questions with spans of a context, any context length."""

from kbert.commands import EXIT_OK
from kbert.commands.inference_inputs import add_common_arguments
from kbert.commands.inference_inputs import engine_options
from kbert.commands.inference_inputs import load_model
from kbert.commands.inference_inputs import map_in_batches
from kbert.commands.inference_inputs import print_json
from kbert.commands.inference_inputs import read_json_lines
from kbert.commands.inference_inputs import require_inputs
from kbert.data.question_windowing import QuestionWindowing

# The flags' defaults: `answer`'s.
DEFAULT_WINDOWING = QuestionWindowing()


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "qa",
        help="answer questions with spans of a context",
        description=(
            "Answer each question with the best spans of its context, with scores and "
            "character offsets. Long contexts are read in overlapping windows. An empty "
            "context gives 'no answer'."
        ),
        epilog=(
            'example: kbert qa --model runs/squad/model --question "Who sat?" '
            '--context "The cat sat on the mat."'
        ),
    )
    add_common_arguments(
        parser,
        file_help='questions as JSON Lines: one {"question", "context"} object per line '
        '(an "id" field is copied to the output)',
    )
    parser.add_argument("--question", action="append", metavar="Q", help="a question (repeatable)")
    context = parser.add_mutually_exclusive_group()
    context.add_argument("--context", metavar="TEXT", help="the context of --question")
    context.add_argument(
        "--context-file", metavar="F", help="read the context of --question from a file"
    )
    parser.add_argument(
        "--top-k", type=int, default=1, metavar="K", help="answers per question (default: 1)"
    )
    parser.add_argument(
        "--max-answer-length",
        type=int,
        default=30,
        metavar="N",
        help="longest answer in tokens (default: 30)",
    )
    parser.add_argument(
        "--doc-stride",
        type=int,
        default=DEFAULT_WINDOWING.doc_stride,
        metavar="N",
        help=f"context tokens between window starts (default: {DEFAULT_WINDOWING.doc_stride})",
    )
    parser.add_argument(
        "--max-length",
        type=int,
        default=DEFAULT_WINDOWING.max_length,
        metavar="N",
        help="tokens per window, capped at the model's limit "
        f"(default: {DEFAULT_WINDOWING.max_length})",
    )
    parser.add_argument(
        "--null-threshold",
        type=float,
        metavar="T",
        help="SQuAD 2.0 models: answer 'no answer' when the no-answer score beats the "
        "best span by more than T (default: always answer)",
    )
    parser.set_defaults(run=run)


def _inputs(args):
    """The question records: dicts with `question`, `context` and maybe `id`."""
    records = []
    if args.question:
        if args.context is not None:
            context = args.context
        elif args.context_file is not None:
            from kbert.data.text_file import read_text_file

            context = read_text_file(args.context_file)
        else:
            raise ValueError("--question needs a context: give --context or --context-file.")
        records = [{"question": question, "context": context} for question in args.question]
    elif args.context is not None or args.context_file is not None:
        raise ValueError("A context needs at least one --question.")
    if args.file:
        records += read_json_lines(args.file, ["question", "context"], optional=["id"])
    return require_inputs(records, "--question with --context, or questions")


def run(args):
    from kbert.models import BertQuestionAnswerer

    records = _inputs(args)
    windowing = QuestionWindowing(max_length=args.max_length, doc_stride=args.doc_stride)
    # Like classify and tag: a head that would start untrained is an error saying how
    # to get one, not a warning above answers that are noise.
    model = load_model(BertQuestionAnswerer, args.model)

    def answer_batch(batch):
        # The windows of all the batch's questions are sorted and batched together.
        return model.answer(
            [record["question"] for record in batch],
            [record["context"] for record in batch],
            top_k=args.top_k,
            max_answer_length=args.max_answer_length,
            windowing=windowing,
            null_threshold=args.null_threshold,
            batch_size=args.batch_size,
            **engine_options(args),
        )

    results = map_in_batches(answer_batch, records, args.batch_size, "qa")
    for record, result in zip(records, results):
        if args.json:
            output = {"id": record["id"]} if "id" in record else {}
            output.update(
                question=result.question,
                answers=result.answers,
                no_answer_score=result.no_answer_score,
                is_impossible=result.is_impossible,
                head_trained=result.head_trained,
            )
            print_json(output)
            continue
        print(f"Q: {result.question}")
        if result.is_impossible:
            print("  no answer")
        for rank, answer in enumerate(result.answers, start=1):
            print(f"  {rank}. {answer.probability:.4f}  {answer.start}:{answer.end}  {answer.text}")
    return EXIT_OK
