"""`kbert export SRC DST --format huggingface|keras-hub|onnx`: a kbert model in another format."""

from kbert.commands import EXIT_OK
from kbert.commands import MODEL_HELP

FORMATS = ("huggingface", "keras-hub", "onnx")


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "export",
        help="export a kbert preset as a Hugging Face folder, a keras-hub preset or ONNX",
        description=(
            "Write the model SRC (a kbert preset folder, any checkpoint `kbert convert` "
            "reads, or a published checkpoint name) to the folder DST: as a Hugging Face "
            "transformers folder (config.json, model.safetensors, vocab.txt) that "
            "BertFor*.from_pretrained loads, or as a keras-hub preset that "
            "keras_hub.models.BertBackbone.from_preset loads, or as an ONNX folder "
            "(model.onnx with dynamic batch and length axes, inputs token_ids, "
            "segment_ids, padding_mask, and the tokenizer files) that ONNX Runtime runs."
        ),
    )
    parser.add_argument("src", metavar="SRC", help=f"the model to export: {MODEL_HELP}")
    parser.add_argument("dst", metavar="DST", help="folder to write")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        required=True,
        help="huggingface: transformers BertFor* folder; keras-hub: keras-hub preset; "
        "onnx: ONNX graph and tokenizer",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace DST if it already holds a folder of that format",
    )
    parser.set_defaults(run=run)


def run(args):
    from kbert.presets.model_source import checkpoint_source

    if args.format == "onnx":
        print(_export_onnx(args.src, args.dst, args.overwrite))
        return EXIT_OK
    if args.format == "huggingface":
        from kbert.checkpoints.exports import export_huggingface as export
    else:
        from kbert.checkpoints.exports import export_keras_hub as export

    print(export(checkpoint_source(args.src), args.dst, overwrite=args.overwrite))
    return EXIT_OK


def _export_onnx(source, destination, overwrite):
    """The ONNX folder of `source`, written in this process on any backend."""
    from kbert.checkpoints.kbert_preset import read_preset_config
    from kbert.inference.onnx_folder import write_onnx_folder
    from kbert.models import BertBackbone
    from kbert.models import BertTask
    from kbert.presets import resolve_preset

    preset = resolve_preset(source)
    is_backbone = read_preset_config(preset)["class_name"] == BertBackbone.__name__
    model = (BertBackbone if is_backbone else BertTask).from_preset(preset)
    tokenizer = None
    if is_backbone:
        from kbert.tokenizer import BertTokenizer

        tokenizer = BertTokenizer.from_preset(preset)
    return write_onnx_folder(model, destination, overwrite=overwrite, tokenizer=tokenizer)
