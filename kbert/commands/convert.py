"""`kbert convert SRC DST`: any supported checkpoint folder into a kbert preset."""

import argparse
import textwrap

from kbert.commands import EXIT_OK
from kbert.commands import MODEL_HELP


def published_names_epilog():
    """What `--help` lists after the options: every model source, folder format and name.

    The model errors of every command point here instead of repeating the lists (no
    Keras import: names and file lists only).
    """
    from kbert.checkpoints.formats import format_descriptions
    from kbert.checkpoints.named_checkpoints import NAMED_CHECKPOINTS
    from kbert.presets.model_source import ACCEPTED_FORMS

    lines = ["model sources (what SRC and every --model take):"]
    lines += [f"  - {form}" for form in ACCEPTED_FORMS]
    lines += ["", "checkpoint folders (format: the files it holds):"]
    lines += [f"  {description}" for description in format_descriptions()]
    lines += ["", "published checkpoints (name: description; aliases):"]
    for name, entry in NAMED_CHECKPOINTS.items():
        aliases = ", ".join(alias for alias in (*entry.aliases, entry.huggingface_id) if alias)
        lines.append(f"  {name}: {entry.description}; {aliases}")
    return "\n".join(
        textwrap.fill(line, width=100, subsequent_indent="      ") for line in lines
    )


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
        epilog=published_names_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "src", metavar="SRC", help=f"the model to convert: {MODEL_HELP}"
    )
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
    from kbert.presets.model_source import checkpoint_source

    source = checkpoint_source(args.src)
    print(convert(source, args.dst, overwrite=args.overwrite, lowercase=args.lowercase))
    return EXIT_OK
