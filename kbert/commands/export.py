"""`kbert export SRC DST --format huggingface|keras-hub`: a kbert model in another format."""

from kbert.commands import EXIT_OK
from kbert.commands import MODEL_HELP

FORMATS = ("huggingface", "keras-hub")


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "export",
        help="export a kbert preset as a Hugging Face folder or a keras-hub preset",
        description=(
            "Write the model SRC (a kbert preset folder, any checkpoint `kbert convert` "
            "reads, or a published checkpoint name) to the folder DST: as a Hugging Face "
            "transformers folder (config.json, model.safetensors, vocab.txt) that "
            "BertFor*.from_pretrained loads, or as a keras-hub preset that "
            "keras_hub.models.BertBackbone.from_preset loads."
        ),
    )
    parser.add_argument("src", metavar="SRC", help=f"the model to export: {MODEL_HELP}")
    parser.add_argument("dst", metavar="DST", help="folder to write")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        required=True,
        help="huggingface: transformers BertFor* folder; keras-hub: keras-hub preset",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace DST if it already holds a folder of that format",
    )
    parser.set_defaults(run=run)


def run(args):
    from kbert.presets.model_source import checkpoint_source

    if args.format == "huggingface":
        from kbert.checkpoints.exports import export_huggingface as export
    else:
        from kbert.checkpoints.exports import export_keras_hub as export

    print(export(checkpoint_source(args.src), args.dst, overwrite=args.overwrite))
    return EXIT_OK
