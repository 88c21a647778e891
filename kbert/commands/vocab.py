"""`kbert vocab`: train a WordPiece vocabulary from text files."""

import pathlib

from kbert.commands import EXIT_OK
from kbert.commands import add_count_argument


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "vocab",
        help="train a WordPiece vocabulary (vocab.txt) from text files",
        description=(
            "Learn a WordPiece vocabulary from FILES with BERT's text processing and "
            "write vocab.txt and tokenizer_config.json into --output, ready for "
            "`kbert create-pretraining-data --vocab`. The vocabulary starts with [PAD] "
            "[UNK] [CLS] [SEP] [MASK], then the [unusedN] placeholders."
        ),
        epilog="example: kbert vocab --output my_vocab --size 8000 corpus/*.txt",
    )
    parser.add_argument("files", nargs="+", metavar="FILES", help="UTF-8 text files")
    parser.add_argument("--output", required=True, metavar="DIR", help="folder to write")
    parser.add_argument(
        "--size", type=int, default=30522, metavar="N", help="tokens wanted (default: 30522)"
    )
    parser.add_argument(
        "--cased", action="store_true", help="keep case and accents (default: lower-case)"
    )
    add_count_argument(parser, "--unused", 0, "[unusedN] placeholders after the special tokens")
    add_count_argument(
        parser, "--min-frequency", 2, "how often a pair must occur to become a piece"
    )
    add_count_argument(parser, "--limit-alphabet", 1000, "most distinct characters kept")
    parser.add_argument(
        "--overwrite", action="store_true", help="replace a vocab.txt already in DIR"
    )
    parser.set_defaults(run=run)


def run(args):
    from kbert.checkpoints.tokenizer_files import VOCABULARY_FILE
    from kbert.pretraining import VocabularyTrainer

    output = pathlib.Path(args.output)
    if (output / VOCABULARY_FILE).exists() and not args.overwrite:
        raise ValueError(f"{output / VOCABULARY_FILE} exists; pass --overwrite to replace it.")
    trainer = VocabularyTrainer(
        vocabulary_size=args.size,
        lowercase=not args.cased,
        min_frequency=args.min_frequency,
        num_unused_tokens=args.unused,
        limit_alphabet=args.limit_alphabet,
    )
    tokenizer = trainer.train(args.files)
    tokenizer.save_to_preset(output)
    casing = "cased" if args.cased else "uncased"
    print(f"Wrote a vocabulary of {tokenizer.vocabulary_size} tokens ({casing}) to {output}")
    return EXIT_OK
