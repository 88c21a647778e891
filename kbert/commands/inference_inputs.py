"""What the inference commands (fill-mask, qa, classify, tag) share.

Inputs come from arguments and/or a file; results print as readable text or, with
`--json`, as JSON Lines (one object per input, in input order). A progress bar on
stderr appears when there are many inputs. Not a subcommand itself.
"""

import dataclasses
import json
import logging
import sys

from kbert.argument_checks import text_problem
from kbert.commands import MODEL_HELP
from kbert.preprocessing.length_buckets import CPU_BATCH_SIZE
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE

# Show a progress bar from this many inputs on.
MANY_INPUTS = 16
# Inputs handed to the inference function at once, in batches: it sorts them by length
# so each of its batches pads to a tight bucket, which a chunk of one batch would not.
BATCHES_PER_CHUNK = 32


def add_batch_size_argument(parser):
    """`--batch-size N`: inputs per forward pass, None for the device's default."""
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        metavar="N",
        help=f"inputs per forward pass (default: {CPU_BATCH_SIZE} on a CPU, "
        f"{DEFAULT_BATCH_SIZE} on a GPU or TPU)",
    )


def add_common_arguments(parser, file_help, texts_help=None, engines=True,
                         default_model=("demo", "the bundled model")):
    """`TEXT...` (when `texts_help` is given), `--model`, `--file`, `--json`, `--batch-size`,
    and with `engines` `--engine` and `--quantize` (`engine_options` reads them).

    `default_model` is `(name, what it is)`: the built-in preset `--model` defaults to.
    """
    if texts_help is not None:
        parser.add_argument("texts", nargs="*", metavar="TEXT", help=texts_help)
    parser.add_argument(
        "--model",
        default=default_model[0],
        metavar="MODEL",
        help=f"{MODEL_HELP} (default: {default_model[0]}, {default_model[1]})",
    )
    parser.add_argument("--file", metavar="F", help=file_help)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per input (JSON Lines) instead of text",
    )
    add_batch_size_argument(parser)
    if engines:
        parser.add_argument(
            "--engine",
            choices=("auto", "keras", "onnxruntime"),
            default="auto",
            help="what runs the model: keras, onnxruntime (the model exported to ONNX once, "
            "cached), or auto (default: Keras unless ONNX Runtime was measured faster)",
        )
        parser.add_argument(
            "--quantize",
            choices=("int8",),
            default=None,
            help="run with int8 weights (faster on a CPU, slightly different scores)",
        )


def engine_options(args):
    """The `engine` and `quantize` arguments of the inference calls, from the command line."""
    return {"engine": args.engine, "quantize": args.quantize}


def read_lines(path):
    """The non-blank lines of a UTF-8 file ("-" reads stdin), line endings removed.

    A file is streamed line by line, each line at most `MAX_LINE_BYTES` long (a longer
    one is refused with the file and line named).
    """
    return [line for _, line in _numbered_lines(path) if line.strip()]


def _numbered_lines(path):
    """`(number, line)` of a file through the bounded reader, or of stdin for "-"."""
    from kbert.data.text_file import numbered_lines
    from kbert.data.text_file import read_numbered_lines

    return numbered_lines(sys.stdin.read()) if path == "-" else read_numbered_lines(path)


def read_json_lines(path, fields, optional=()):
    """Records of a JSON Lines file: dicts with string values for `fields`.

    Errors name the file, the line and the field.
    """
    records = []
    for number, line in _numbered_lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not valid JSON ({error.msg}).") from None
        except (RecursionError, ValueError) as error:
            raise ValueError(f"{path}:{number}: not valid JSON ({type(error).__name__}).") from None
        if not isinstance(record, dict):
            raise ValueError(
                f"{path}:{number}: each line must be a JSON object with fields "
                f"{list(fields)}. Received: {type(record).__name__}"
            )
        for field in tuple(fields) + tuple(optional):
            if field not in record:
                if field in optional:
                    continue
                raise ValueError(f"{path}:{number}: the field `{field}` is missing.")
            problem = text_problem(record[field])
            if problem is not None:
                raise ValueError(f"{path}:{number}: the field `{field}` must be a text: {problem}.")
        records.append(record)
    return records


def require_inputs(inputs, what):
    if not inputs:
        raise ValueError(f"Nothing to do: give {what} as arguments or with --file.")
    return inputs


def load_model(model_class, preset):
    """`model_class.from_preset(preset)`; the preset must carry a tokenizer and the head.

    A head the preset does not hold (it would start untrained) is an error that says how
    to get one, in every command.
    """
    from kbert.models.preset_loading import missing_head_message

    # The loader's warning about a freshly drawn head is held back: here it is the error
    # below, which says what to do, not a warning printed before it.
    held_back = _HeldBackFreshHeadWarnings()
    presets_logger = logging.getLogger("kbert.presets")
    presets_logger.addFilter(held_back)
    try:
        model = model_class.from_preset(preset)
    finally:
        presets_logger.removeFilter(held_back)
    if model.tokenizer is None:
        raise ValueError(
            f"The preset {preset!r} has no vocabulary (vocab.txt or tokenizer.json), so "
            "its texts cannot be tokenized."
        )
    if model.freshly_initialized_heads:
        raise ValueError(missing_head_message(model_class, preset, _class_name(preset)))
    return model


class _HeldBackFreshHeadWarnings(logging.Filter):
    """Drops the loader's "head ... is freshly initialised" warnings."""

    def filter(self, record):
        return "is freshly initialised" not in record.getMessage()


def _class_name(preset):
    from kbert.checkpoints.kbert_preset import read_preset_config
    from kbert.presets import resolve_preset

    return read_preset_config(resolve_preset(preset))["class_name"]


def map_in_batches(function, inputs, batch_size, description):
    """`function(chunk)` over `inputs` in chunks of `BATCHES_PER_CHUNK` batches, with a
    progress bar when many (the function sorts and batches each chunk itself).

    Returns:
        The concatenated results, one per input.
    """
    from tqdm import tqdm

    if batch_size is None:
        from kbert.inference.model_io import inference_batch_size

        batch_size = inference_batch_size()
    if isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"`--batch-size` must be positive. Received: {batch_size}")
    results = []
    with tqdm(
        total=len(inputs),
        desc=description,
        unit="input",
        file=sys.stderr,
        disable=len(inputs) < MANY_INPUTS,
    ) as progress:
        chunk_size = batch_size * BATCHES_PER_CHUNK
        for start in range(0, len(inputs), chunk_size):
            chunk = inputs[start : start + chunk_size]
            results.extend(function(chunk))
            progress.update(len(chunk))
    return results


def print_json(record):
    """Prints a structure of dicts, lists and result dataclasses as one line of JSON."""
    print(json.dumps(record, ensure_ascii=False, default=_dataclass_fields))


def _dataclass_fields(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
