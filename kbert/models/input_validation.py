"""Checks on model inputs that run before any backend computation.

Every backend fails differently on bad ids (JAX clamps silently, TensorFlow raises an
op error, PyTorch an IndexError), so kbert checks inputs itself: shapes always, values
whenever they are host data (NumPy arrays or lists). The messages are the same on every
backend because no backend code has run yet.
"""

import numpy as np

MODEL_INPUTS = ("token_ids", "segment_ids", "padding_mask")


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


def validate_inputs(inputs, config, extra_inputs=()):
    """Raises ValueError when `inputs` cannot be fed to a BERT model built from `config`.

    Args:
        inputs: dict with `token_ids`, `segment_ids`, `padding_mask` (and `extra_inputs`).
        config: the model's `BertConfig`.
        extra_inputs: further required keys, e.g. ("mask_positions",).
    """
    expected = MODEL_INPUTS + tuple(extra_inputs)
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
    for key in ("segment_ids", "padding_mask"):
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
    if "mask_positions" in expected:
        shape = _shape(inputs["mask_positions"])
        if len(shape) != 2 or (
            shape[0] is not None and token_shape[0] is not None and shape[0] != token_shape[0]
        ):
            raise ValueError(
                "`mask_positions` must have shape (batch_size, num_predictions) with the "
                f"batch size of `token_ids`. Received: token_ids.shape={token_shape}, "
                f"mask_positions.shape={shape}"
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
    if "mask_positions" in expected and sequence_length is not None:
        _check_range(
            "mask_positions",
            _host_array(inputs["mask_positions"]),
            sequence_length,
            "sequence_length",
        )
