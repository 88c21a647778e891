"""`kbert embed`: hidden-state feature vectors of texts, per token or pooled per text.

`--output` writes `.npy` or `.jsonl`:
- `.npy` (NumPy, no pickled objects): (texts, D) float32 for `--pooling mean|cls`. With
  `--pooling none` an array needs every text to have the same number of tokens; it is
  then (texts, L, D), and otherwise the command refuses, from the token counts before
  the model runs (write `.jsonl` instead), so a file never holds padding that a reader
  could take for tokens.
- `.jsonl`: one object per text, in input order: `text` and `vector` (D floats) when
  pooled; `text`, `tokens`, `offsets` ([start, end] into the text) and `vectors`
  (L lists of D floats) with `--pooling none`.
Without `--output`, one summary line per text (or, with `--json`, the JSON Lines objects
on stdout).

`--layers=-4..-1` needs the `=`: argparse reads a value that starts with "-" and is not
a plain number (`-1` is) as an option.
"""

import json
import pathlib

from kbert.commands import EXIT_OK
from kbert.commands.inference_inputs import add_common_arguments
from kbert.commands.inference_inputs import map_in_batches
from kbert.commands.inference_inputs import print_json
from kbert.commands.inference_inputs import read_lines
from kbert.commands.inference_inputs import require_inputs

OUTPUT_SUFFIXES = (".npy", ".jsonl")
LAYERS_HELP = (
    "hidden states to use: an index (-1), a comma-separated list (0,4,8) or an "
    "inclusive range (-4..-1); 0 is the embeddings output, 1..N the encoder blocks, "
    "negative indices count from the end. Write a value that starts with '-' and is "
    "not a plain number with '=': --layers=-4..-1. Default: the last four blocks "
    "(every block of a model with fewer)"
)


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "embed",
        help="feature vectors of texts from chosen layers",
        description=(
            "Compute hidden-state features of each TEXT (the BERT paper's feature-based "
            "approach): the chosen layers' states of every token, combined, and "
            "optionally pooled into one vector per text. Texts longer than the model's "
            "limit are truncated with a warning."
        ),
        epilog=(
            "example: kbert embed --model demo --layers=-2..-1 --pooling mean "
            '--output vectors.npy "The cat sat." "A dog ran."'
        ),
    )
    add_common_arguments(
        parser,
        texts_help="texts to embed",
        file_help='more texts, one per line ("-" for stdin)',
        engines=False,
    )
    parser.add_argument("--layers", metavar="SPEC", help=LAYERS_HELP)
    parser.add_argument(
        "--combine",
        choices=("concat", "mean", "sum"),
        default="concat",
        help="how the layers make one vector per token: joined (default), averaged or added",
    )
    parser.add_argument(
        "--pooling",
        choices=("none", "cls", "mean"),
        default="none",
        help="none: one vector per token (default); mean: the mean over each text's "
        "tokens, [CLS] and [SEP] included, padding left out; cls: the [CLS] token's vector",
    )
    parser.add_argument(
        "--output",
        metavar="PATH",
        help="write the vectors to PATH: .npy (an array; with --pooling none only when "
        "all texts have as many tokens) or .jsonl (one object per text)",
    )
    parser.set_defaults(run=run)


def parse_layers(spec):
    """The layer indices of a `--layers` value, in order.

    Args:
        spec: comma-separated items, each an integer or an inclusive range `a..b`
            with `a <= b`.

    Returns:
        A tuple of ints (checked against the model by `kbert.inference.embed`).

    Examples:

    >>> parse_layers("-4..-1")
    (-4, -3, -2, -1)
    >>> parse_layers("0,4,8")
    (0, 4, 8)
    """
    layers = []
    for item in spec.split(","):
        bounds = item.split("..")
        try:
            numbers = [int(bound) for bound in bounds]
        except ValueError:
            numbers = []
        if len(bounds) > 2 or not numbers or (len(numbers) == 2 and numbers[0] > numbers[1]):
            raise ValueError(
                "`--layers` takes indices and inclusive ranges, e.g. -1, 0,4,8 or -4..-1 "
                f"(a range counts up). Received: --layers={spec!r}"
            )
        layers.extend(range(numbers[0], numbers[-1] + 1))
    return tuple(layers)


def _output_path(output):
    path = pathlib.Path(output)
    if path.suffix not in OUTPUT_SUFFIXES:
        raise ValueError(
            f"`--output` must end in {' or '.join(OUTPUT_SUFFIXES)}. Received: --output={output!r}"
        )
    if not path.parent.is_dir():
        raise ValueError(f"`--output`'s folder does not exist. Received: --output={output!r}")
    return path


def _load(preset):
    """The backbone of `preset` (any kbert preset) and its tokenizer."""
    from kbert.models import BertBackbone
    from kbert.tokenizer.bert_tokenizer import BertTokenizer

    backbone = BertBackbone.from_preset(preset)
    tokenizer = getattr(backbone, "tokenizer", None)
    if tokenizer is None:
        tokenizer = BertTokenizer.from_preset(preset)
    return backbone, tokenizer


def _records(texts, results, pooled):
    """The JSON Lines objects of the results, one per text."""
    if pooled:
        return [{"text": text, "vector": vector.tolist()} for text, vector in zip(texts, results)]
    return [
        {
            "text": result.text,
            "tokens": list(result.tokens),
            "offsets": [list(offset) for offset in result.offsets],
            "vectors": result.vectors.tolist(),
        }
        for result in results
    ]


def _check_one_array(backbone, tokenizer, texts):
    """Raises unless every text has as many tokens (`.npy` with `--pooling none`).

    Runs before the model, on the tokenizer alone, so a long job does not fail at the end.
    """
    from kbert.inference.model_io import sequence_limit

    limit = sequence_limit(backbone, tokenizer)
    encodings = tokenizer.encode_batch(texts, max_length=limit)
    lengths = sorted({len(encoding) for encoding in encodings})
    if len(lengths) > 1:
        raise ValueError(
            "A .npy file holds one array, but with --pooling none the texts have "
            f"different numbers of tokens ({', '.join(map(str, lengths))}). Write "
            ".jsonl instead, or pool with --pooling mean or cls."
        )


def _write(path, texts, results, pooled):
    import numpy as np

    from kbert.files.atomic_write import write_bytes_atomically
    from kbert.files.atomic_write import write_stream_atomically

    if path.suffix == ".npy":
        vectors = results if pooled else [result.vectors for result in results]
        array = np.stack(vectors).astype(np.float32, copy=False)
        write_stream_atomically(path, lambda file: np.save(file, array, allow_pickle=False))
        return array.shape
    records = _records(texts, results, pooled)
    lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    write_bytes_atomically(path, lines.encode("utf-8"))
    return None


def run(args):
    from kbert.inference import embed
    from kbert.inference.embedding import resolve_layers

    texts = list(args.texts) + (read_lines(args.file) if args.file else [])
    require_inputs(texts, "texts")
    layers = None if args.layers is None else parse_layers(args.layers)
    path = None if args.output is None else _output_path(args.output)
    backbone, tokenizer = _load(args.model)
    # `--layers` checked against the model before the first batch, not in each.
    resolve_layers(layers, backbone.bert_config.num_layers)
    pooled = args.pooling != "none"
    if path is not None and path.suffix == ".npy" and not pooled:
        _check_one_array(backbone, tokenizer, texts)
    options = dict(layers=layers, combine=args.combine, pooling=args.pooling)
    results = map_in_batches(
        lambda batch: embed(backbone, tokenizer, batch, batch_size=args.batch_size, **options),
        texts,
        args.batch_size,
        "embed",
    )

    if path is not None:
        shape = _write(path, texts, results, pooled)
        summary = {"output": str(path), "texts": len(texts)}
        if shape is not None:
            summary["shape"] = list(shape)
        if args.json:
            print_json(summary)
        else:
            print(f"wrote {len(texts)} texts to {path}" + (f" (array {shape})" if shape else ""))
        return EXIT_OK
    if args.json:
        for record in _records(texts, results, pooled):
            print_json(record)
        return EXIT_OK
    for text, result in zip(texts, results):
        if pooled:
            print(f"{result.shape[-1]} dims\tnorm {_norm(result):.4f}\t{text}")
        else:
            vectors = result.vectors
            print(
                f"{len(vectors)} tokens x {vectors.shape[-1]} dims\t"
                f"mean norm {_norm(vectors).mean():.4f}\t{text}"
            )
    return EXIT_OK


def _norm(vectors):
    import numpy as np

    return np.linalg.norm(vectors, axis=-1)
