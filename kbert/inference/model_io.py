"""What every inference call shares: the tokenizer, the length limit, batching, softmax.

The model is duck-typed: anything with `predict_on_batch(dict)`, a `bert_config`
(for `max_positions` and `vocabulary_size`) and optionally a `tokenizer` attribute.
`predict_on_batch` is Keras's compiled single-batch forward pass: on JAX and
TensorFlow it is traced and compiled once per input shape and reused afterwards,
which is why every batch is first padded to a length bucket and a row bucket
(`kbert.preprocessing.length_buckets`).

Every entry that takes several texts runs them through `length_sorted_batches`: sorted by
token length, longest first, batched, each batch padded to its own bucket (so the
padding of each batch stays within `inference_padding_bound` of its longest row), results written back
at the caller's positions.
"""

import functools
import weakref

import keras
import numpy as np

from kbert.argument_checks import check_positive_int
from kbert.preprocessing.length_buckets import CPU_BATCH_SIZE
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.preprocessing.length_buckets import INFERENCE_LENGTH_BUCKETS
from kbert.preprocessing.length_buckets import bucket_length
from kbert.preprocessing.length_buckets import length_buckets
from kbert.preprocessing.length_buckets import length_sorted_batches
from kbert.preprocessing.data_parallel_rows import inference_rows
from kbert.preprocessing.length_buckets import pad_rows


def resolve_tokenizer(model, tokenizer):
    """`tokenizer`, else `model.tokenizer`; checked against the model's vocabulary."""
    if tokenizer is None:
        tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None:
        raise ValueError(
            f"{type(model).__name__} has no tokenizer: load it with `from_preset` from a "
            "preset that has a vocabulary, set `model.tokenizer`, or give the "
            "`kbert.inference` function a tokenizer. Received: tokenizer=None"
        )
    model_vocabulary = model.bert_config.vocabulary_size
    if tokenizer.vocabulary_size > model_vocabulary:
        raise ValueError(
            f"The tokenizer has {tokenizer.vocabulary_size} tokens but the model only "
            f"{model_vocabulary} token embeddings; they do not belong together. "
            f"Received: tokenizer={tokenizer!r}"
        )
    return tokenizer


def sequence_limit(model, tokenizer):
    """The longest input (`[CLS] ... [SEP]` included) both the model and the tokenizer accept."""
    return min(int(model.bert_config.max_positions), int(tokenizer.max_length))


def inference_batch_size(batch_size=None):
    """`batch_size` checked, or for None the inference default of this machine.

    None gives `CPU_BATCH_SIZE` (8) when Keras runs on a CPU, `DEFAULT_BATCH_SIZE` (32)
    on a GPU or TPU. On a CPU a token of BERT-base costs the same in a pass of 8 rows
    as of 32 (about 1 ms each, benchmarks/NOTES.md section 8), and texts sorted by
    length then batched by 8 pad far less than by 32: fewer tokens are computed. An
    accelerator needs the larger passes to be busy.

    Raises:
        ValueError: for a `batch_size` that is not a positive integer.
    """
    if batch_size is None:
        from kbert.inference.inference_engine import on_cpu

        return CPU_BATCH_SIZE if on_cpu() else DEFAULT_BATCH_SIZE
    return check_positive_int("batch_size", batch_size)


def model_buckets(model):
    """The inference length buckets of `model` (see `length_buckets`).

    A model that runs every shape at no extra cost (`compiles_per_shape = False`: an
    `OnnxRuntimeModel`) gets every length, so each batch is padded to its own longest
    row only.
    """
    max_positions = int(model.bert_config.max_positions)
    if not getattr(model, "compiles_per_shape", True):
        return tuple(range(1, max_positions + 1))
    return length_buckets(max_positions, INFERENCE_LENGTH_BUCKETS)


def pad_batch(tokenizer, encodings, buckets, longest=None):
    """Pads encodings to a length bucket and a row bucket (`inference_rows`).

    Args:
        tokenizer: pads the token ids with its `[PAD]`.
        encodings: objects with `token_ids`, `segment_ids` and a length
            (`Encoding`, `QAWindow`).
        buckets: the model's length buckets.
        longest: pad to the bucket of this length rather than of the longest
            encoding (so that several batches share one shape).

    Returns:
        The model inputs `token_ids`, `segment_ids`, `padding_mask`; rows beyond
        `len(encodings)` repeat row 0 and are to be ignored.
    """
    if longest is None:
        longest = max(len(encoding) for encoding in encodings)
    length = bucket_length(longest, buckets)
    batch = tokenizer.pad(encodings, sequence_length=length)
    return pad_rows(batch, inference_rows(len(encodings)))


def predict_in_batches(model, tokenizer, encodings, batch_size, same_length=False):
    """Runs the model over encodings, longest first, one padded batch at a time.

    Args:
        model: the model.
        tokenizer: pads with its `[PAD]`.
        encodings: a list of `Encoding` (or `QAWindow`).
        batch_size: rows per forward pass.
        same_length: pad every batch to the bucket of the longest encoding, so that
            all outputs have the same sequence length.

    Yields:
        `(rows, outputs)`: the indices into `encodings` of a batch, and the model's
        outputs, whose first `len(rows)` rows belong to them, in that order.
    """
    buckets = model_buckets(model)
    lengths = [len(encoding) for encoding in encodings]
    longest = max(lengths) if same_length else None
    for rows in length_sorted_batches(lengths, batch_size):
        inputs = pad_batch(tokenizer, [encodings[row] for row in rows], buckets, longest)
        yield rows, predict(model, inputs)


def predict_dataset(model, dataset):
    """`model.predict` on raw inputs: the outputs of a length-sorted `BucketedDataset`.

    Each batch padded to its own bucket runs through `predict` (compiled, no Keras
    predict loop, so one text costs one forward pass); the outputs come back in the
    examples' order, stacked by `stack_example_outputs`.
    """
    return stack_example_outputs(dataset.predict(model, forward=functools.partial(predict, model)))


def stack_example_outputs(outputs):
    """One array per output from a list of per-example outputs (`BucketedDataset.predict`).

    Examples batched apart have outputs of different lengths (a per-token output is
    as long as its batch's bucket, a masked-LM's as its batch's masks): each is
    padded with zeros along its first axis to the longest, then stacked.

    Args:
        outputs: a list, one entry per example, of arrays or dicts/tuples of them.

    Returns:
        The structure of one entry, each leaf an array with the examples first.
    """
    first = outputs[0]
    if isinstance(first, dict):
        return {key: stack_example_outputs([row[key] for row in outputs]) for key in first}
    if isinstance(first, tuple):
        return tuple(stack_example_outputs([row[index] for row in outputs])
                     for index in range(len(first)))
    rows = [np.asarray(row) for row in outputs]
    if rows[0].ndim and len({row.shape[0] for row in rows}) > 1:
        longest = max(row.shape[0] for row in rows)
        rows = [
            np.pad(row, [(0, longest - row.shape[0])] + [(0, 0)] * (row.ndim - 1))
            for row in rows
        ]
    return np.stack(rows)


def predict(model, inputs):
    """One compiled forward pass on host arrays; outputs as NumPy arrays.

    On JAX, a `jax.jit` of the model's `stateless_call` (compiled once per input
    shape, kept per model): Keras' `predict_on_batch` also syncs every variable back
    into the model after each call, which for one short text costs more than the
    forward pass of a small model. The variables' current values are passed on each
    call, so weights changed since (by `fit`) are used. Other backends, models that
    are not Keras models, models given their own `predict_on_batch` and runs under a
    `keras.distribution` use that.
    """
    forward = _jax_forward(model)
    if forward is None:
        return model.predict_on_batch(inputs)
    trainable = [variable.value for variable in model.trainable_variables]
    non_trainable = [variable.value for variable in model.non_trainable_variables]
    outputs = forward(trainable, non_trainable, inputs)
    return keras.tree.map_structure(np.asarray, outputs)


def _jax_forward(model):
    """The cached jitted stateless forward pass of `model` on JAX, else None."""
    if keras.config.backend() != "jax" or not hasattr(model, "stateless_call"):
        return None
    if "predict_on_batch" in vars(model):  # replaced on this model: honour it
        return None
    if keras.distribution.distribution() is not None:
        return None  # Keras lays the inputs out over the devices
    forward = _JAX_FORWARDS.get(model)
    if forward is None:
        import jax

        def stateless_forward(trainable, non_trainable, inputs):
            # No `training` argument, as Keras' predict step for a model whose call
            # takes none (the hidden-states view): left unset, no layer trains.
            outputs, _ = model.stateless_call(trainable, non_trainable, inputs)
            return outputs

        forward = _JAX_FORWARDS[model] = jax.jit(stateless_forward)
    return forward


# Per model, its jitted forward pass; dropped with the model.
_JAX_FORWARDS = weakref.WeakKeyDictionary()


def softmax(logits, axis=-1):
    """A numerically stable softmax in float32 (float64 for float64 input)."""
    logits = np.asarray(logits)
    if logits.dtype != np.float64:
        logits = logits.astype(np.float32)
    shifted = logits - np.max(logits, axis=axis, keepdims=True)
    exponentials = np.exp(shifted)
    return exponentials / np.sum(exponentials, axis=axis, keepdims=True)
