"""`kbert create-pretraining-data`: masked-LM and next-sentence instances in shards."""

import sys

from kbert.commands import EXIT_OK


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "create-pretraining-data",
        help="make BERT pretraining instances from text files",
        description=(
            "Make masked-LM and next-sentence pretraining instances from text, with "
            "google-research/bert's recipe, and write them as .npz shards plus "
            "manifest.json into --output. Input: documents separated by blank lines, "
            "one sentence per line (or plain paragraphs with --split-sentences). "
            "Memory stays bounded whatever the corpus size; a tokenized copy of the "
            "corpus is kept in --output while the command runs."
        ),
        epilog=(
            "example: kbert create-pretraining-data --input corpus.txt --vocab my_vocab "
            "--output data --dupe-factor 5"
        ),
    )
    parser.add_argument(
        "--input", nargs="+", required=True, metavar="FILES", help="UTF-8 text files"
    )
    parser.add_argument(
        "--vocab",
        required=True,
        metavar="DIR_OR_FILE",
        help="a folder with vocab.txt and tokenizer_config.json (as `kbert vocab` "
        "writes), a preset, or a vocab.txt file",
    )
    parser.add_argument("--output", required=True, metavar="DIR", help="folder for the shards")
    parser.add_argument(
        "--cased",
        action="store_true",
        help="with a bare vocab.txt: keep case and accents (default: lower-case)",
    )
    _add_number(parser, "--max-seq-length", int, 128, "tokens per instance, [CLS]/[SEP] included")
    _add_number(parser, "--max-predictions-per-seq", int, 20, "most masked tokens per instance")
    _add_number(parser, "--masked-lm-prob", float, 0.15, "fraction of tokens masked")
    _add_number(parser, "--short-seq-prob", float, 0.1, "probability of a shorter instance")
    _add_number(parser, "--dupe-factor", int, 10, "passes over the corpus, each with new masks")
    _add_number(parser, "--seed", int, 12345, "random seed")
    _add_number(parser, "--instances-per-shard", int, 10000, "instances per shard file")
    _add_number(parser, "--shuffle-buffer", int, 10000, "instances shuffled together in memory")
    _add_number(parser, "--document-break", int, 1, "consecutive blank lines that end a document")
    parser.add_argument(
        "--whole-word-masking",
        action="store_true",
        help="mask all word pieces of a word together",
    )
    parser.add_argument(
        "--split-sentences",
        action="store_true",
        help="the input holds paragraphs: split them into sentences by rule",
    )
    parser.add_argument(
        "--dynamic-masking",
        action="store_true",
        help="store unmasked instances, to be masked afresh at training time",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)


def _add_number(parser, flag, kind, default, text):
    parser.add_argument(
        flag,
        type=kind,
        default=default,
        metavar="N" if kind is int else "P",
        help=f"{text} (default: {default})",
    )


def run(args):
    import pathlib

    from tqdm import tqdm

    from kbert.pretraining import create_pretraining_data
    from kbert.tokenizer import BertTokenizer

    vocabulary = pathlib.Path(args.vocab)
    if vocabulary.is_file():
        tokenizer = BertTokenizer.from_vocabulary_file(vocabulary, lowercase=not args.cased)
    else:
        tokenizer = BertTokenizer.from_preset(args.vocab)
        if args.cased and tokenizer.lowercase:
            raise ValueError(
                f"--cased contradicts {args.vocab}, whose tokenizer lower-cases; "
                "--cased applies to a bare vocab.txt only."
            )

    bars = {}

    def progress(stage, count, total):
        if stage not in bars:
            for bar in bars.values():
                bar.close()
            description = "tokenizing" if stage == "tokenize" else "instances"
            bars[stage] = tqdm(
                total=total, desc=description, unit="doc", file=sys.stderr, disable=args.no_progress
            )
        bars[stage].update(count)

    try:
        manifest = create_pretraining_data(
            args.input,
            tokenizer,
            args.output,
            split_sentences=args.split_sentences,
            document_break=args.document_break,
            instances_per_shard=args.instances_per_shard,
            progress=progress,
            max_seq_length=args.max_seq_length,
            short_seq_prob=args.short_seq_prob,
            dupe_factor=args.dupe_factor,
            masked_lm_prob=args.masked_lm_prob,
            max_predictions_per_seq=args.max_predictions_per_seq,
            whole_word_masking=args.whole_word_masking,
            masking=not args.dynamic_masking,
            shuffle_buffer=args.shuffle_buffer,
            seed=args.seed,
        )
    finally:
        for bar in bars.values():
            bar.close()
    statistics = manifest["statistics"]
    print(
        f"Wrote {manifest['num_instances']} instances from {statistics['documents']} documents "
        f"in {len(manifest['shards'])} shard(s) to {args.output}"
    )
    return EXIT_OK
