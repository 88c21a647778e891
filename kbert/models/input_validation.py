"""Checks on model inputs that run before any backend computation.

Every backend fails differently on bad ids (JAX clamps silently, TensorFlow raises an
op error, PyTorch an IndexError), so kbert checks inputs itself: shapes always, values
whenever they are host data (NumPy arrays or lists). The messages are the same on every
backend because no backend code has run yet.
"""

import numpy as np

MODEL_INPUTS = ("token_ids", "segment_ids", "padding_mask")
# The input that makes a row packed: several sequences, numbered 1, 2, ... per token.
PACKED_INPUT = "sequence_index"


def _shape(value):
    shape = getattr(value, "shape", None)
    if shape is None:
        shape = np.shape(value)
    return tuple(None if dim is None else int(dim) for dim in shape)


def _host_array(value):
    """`value` as a NumPy array when it is host data, else None (tensors stay on device)."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (list, tuple)):
        return np.asarray(value)
    return None


def _check_range(name, array, upper, bound_name):
    if array is None or array.size == 0:
        return
    if not np.issubdtype(array.dtype, np.integer) and not np.issubdtype(array.dtype, np.bool_):
        if not np.all(np.equal(np.mod(array, 1), 0)):
            raise ValueError(
                f"`{name}` must hold integers. Received: dtype={array.dtype}"
            )
    bad = (array < 0) | (array >= upper)
    if np.any(bad):
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        position = ", ".join(str(i) for i in index)
        raise ValueError(
            f"`{name}` must be in [0, {bound_name}={upper}). Received: {name}[{position}]="
            f"{array[index].item()} (min={array.min().item()}, max={array.max().item()})"
        )


def is_packed(inputs):
    """Whether `inputs` are packed rows (they hold `sequence_index`)."""
    return isinstance(inputs, dict) and PACKED_INPUT in inputs


def validate_inputs(inputs, config, extra_inputs=(), packed_inputs=None):
    """Raises ValueError when `inputs` cannot be fed to a BERT model built from `config`.

    Args:
        inputs: dict with `token_ids`, `segment_ids`, `padding_mask` (and `extra_inputs`).
        config: the model's `BertConfig`.
        extra_inputs: further required keys, e.g. ("mask_positions",).
        packed_inputs: None for a model that takes no packed rows; otherwise the keys
            packed rows need besides `sequence_index` (e.g. ("cls_positions",)).
    """
    expected = MODEL_INPUTS + tuple(extra_inputs)
    if packed_inputs is not None and is_packed(inputs):
        expected = expected + (PACKED_INPUT,) + tuple(packed_inputs)
    if not isinstance(inputs, dict):
        raise ValueError(
            f"BERT models take a dict with keys {list(expected)}. "
            f"Received: {type(inputs).__name__}"
        )
    missing = [key for key in expected if key not in inputs]
    unexpected = sorted(set(inputs) - set(expected))
    if missing or unexpected:
        raise ValueError(
            f"BERT model inputs must be a dict with keys {list(expected)}. Missing: "
            f"{missing}; unexpected: {unexpected}. Received keys: {sorted(inputs)}"
        )

    token_shape = _shape(inputs["token_ids"])
    if len(token_shape) != 2:
        raise ValueError(
            "`token_ids` must have shape (batch_size, sequence_length). "
            f"Received: token_ids.shape={token_shape}"
        )
    same_shape = ("segment_ids", "padding_mask", PACKED_INPUT)
    for key in (key for key in same_shape if key in expected):
        shape = _shape(inputs[key])
        if len(shape) != 2 or any(
            a is not None and b is not None and a != b for a, b in zip(shape, token_shape)
        ):
            raise ValueError(
                f"`{key}` must have the same shape as `token_ids`. Received: "
                f"token_ids.shape={token_shape}, {key}.shape={shape}"
            )
    sequence_length = token_shape[1]
    if sequence_length is not None and sequence_length > config.max_positions:
        raise ValueError(
            f"Sequences may be at most {config.max_positions} tokens long (the model's "
            f"`max_positions`). Received: sequence_length={sequence_length}"
        )
    for key in ("mask_positions", "cls_positions"):
        if key not in expected:
            continue
        shape = _shape(inputs[key])
        if len(shape) != 2 or (
            shape[0] is not None and token_shape[0] is not None and shape[0] != token_shape[0]
        ):
            raise ValueError(
                f"`{key}` must have shape (batch_size, num_positions) with the "
                f"batch size of `token_ids`. Received: token_ids.shape={token_shape}, "
                f"{key}.shape={shape}"
            )

    _check_range(
        "token_ids", _host_array(inputs["token_ids"]), config.vocabulary_size, "vocabulary_size"
    )
    _check_range(
        "segment_ids",
        _host_array(inputs["segment_ids"]),
        config.type_vocabulary_size,
        "type_vocabulary_size",
    )
    for key in ("mask_positions", "cls_positions"):
        if key in expected and sequence_length is not None:
            _check_range(key, _host_array(inputs[key]), sequence_length, "sequence_length")
    if PACKED_INPUT in expected:
        _check_sequence_index(
            _host_array(inputs[PACKED_INPUT]), _host_array(inputs["padding_mask"])
        )


def _check_sequence_index(index, padding_mask):
    """Packed rows: each row numbers its sequences 1, 2, ... in order, then 0s."""
    if index is None or index.size == 0:
        return
    index = index.astype(np.int64)
    step = np.diff(index, axis=1)
    # From the first token on: start at 1, grow by 0 or 1, and once 0 (padding) stay 0.
    good_start = (index[:, 0] == 1) | np.all(index == 0, axis=1)
    to_padding = index[:, 1:] == 0
    good_steps = np.where(index[:, :-1] == 0, to_padding, (step == 0) | (step == 1) | to_padding)
    bad_rows = ~good_start | ~np.all(good_steps, axis=1)
    if np.any(bad_rows):
        row = int(np.argmax(bad_rows))
        raise ValueError(
            "`sequence_index` must number the sequences of each packed row 1, 2, ... "
            "contiguously from the first token, with 0 for the padding after them. "
            f"Received: sequence_index[{row}]={index[row].tolist()}"
        )
    if padding_mask is not None and np.any((index > 0) != padding_mask.astype(bool)):
        row = int(np.argmax(np.any((index > 0) != padding_mask.astype(bool), axis=1)))
        raise ValueError(
            "`padding_mask` must be 1 exactly where `sequence_index` is not 0. Received: "
            f"row {row}: padding_mask={padding_mask[row].astype(int).tolist()}, "
            f"sequence_index={index[row].tolist()}"
        )


class _Shaped:
    """Stands for a tensor that is not host data: only its shape is checked."""

    def __init__(self, shape):
        self.shape = shape


def validate_choice_inputs(inputs, config, min_choices=2):
    """Raises ValueError unless `inputs` are multiple-choice inputs for `config`.

    They are the three model inputs shaped (batch_size, num_choices, sequence_length),
    with at least `min_choices` choices; the rows `(B * C, L)` must then pass
    `validate_inputs`.
    """
    if isinstance(inputs, dict) and "token_ids" in inputs:
        shape = _shape(inputs["token_ids"])
        if len(shape) != 3:
            raise ValueError(
                "Multiple-choice `token_ids` must have shape (batch_size, num_choices, "
                f"sequence_length). Received: token_ids.shape={shape}"
            )
        if shape[1] is not None and shape[1] < min_choices:
            raise ValueError(
                f"Multiple choice needs at least {min_choices} choices per example. "
                f"Received: token_ids.shape={shape}"
            )
        for key in ("segment_ids", "padding_mask"):
            if key in inputs and _shape(inputs[key]) != shape:
                raise ValueError(
                    f"`{key}` must have the same shape as `token_ids`. Received: "
                    f"token_ids.shape={shape}, {key}.shape={_shape(inputs[key])}"
                )
        inputs = {key: _rows(value) for key, value in inputs.items()}
    validate_inputs(inputs, config)


def _rows(value):
    """`(B, C, L)` input as `(B * C, L)` rows: reshaped host data, else its shape."""
    array = _host_array(value)
    if array is not None and array.ndim == 3:
        return array.reshape(-1, array.shape[-1])
    shape = _shape(value)
    if len(shape) != 3:
        return value
    rows = None if shape[0] is None or shape[1] is None else shape[0] * shape[1]
    return _Shaped((rows, shape[2]))
