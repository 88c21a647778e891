"""`kbert convert SRC DST`: any supported checkpoint folder into a kbert preset."""

from kbert.commands import EXIT_OK


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "convert",
        help="convert a Hugging Face, Google or keras-hub BERT checkpoint into a kbert preset",
        description=(
            "Convert the checkpoint SRC into a kbert preset folder DST. The format is "
            "detected: a Hugging Face folder (config.json with model.safetensors or "
            "pytorch_model.bin, plus vocab.txt or tokenizer.json) keeps every head its "
            "`architectures` names; an original google-research/bert folder "
            "(bert_model.ckpt.*, bert_config.json, vocab.txt) keeps the pretraining heads; "
            "a keras-hub preset keeps its masked-LM or classifier head. SRC may also be a "
            "published checkpoint name such as bert-base-uncased (fetched once, then cached)."
        ),
    )
    parser.add_argument("src", metavar="SRC", help="checkpoint folder or published name")
    parser.add_argument("dst", metavar="DST", help="preset folder to write")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace DST if it already holds a kbert preset",
    )
    casing = parser.add_mutually_exclusive_group()
    casing.add_argument(
        "--lowercase",
        dest="lowercase",
        action="store_const",
        const=True,
        help="the checkpoint is uncased (default: read from its files or folder name)",
    )
    casing.add_argument(
        "--cased",
        dest="lowercase",
        action="store_const",
        const=False,
        help="the checkpoint is cased",
    )
    parser.set_defaults(run=run, lowercase=None)


def run(args):
    from kbert.checkpoints.convert import convert

    print(convert(args.src, args.dst, overwrite=args.overwrite, lowercase=args.lowercase))
    return EXIT_OK
