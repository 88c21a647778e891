"""Checks that make opening a weights file safe: no code runs, nothing oversized is allocated.

- safetensors: the header is validated by `check_safetensors_header` before the
  `safetensors` library reads the file: its declared length must fit in the file, it
  must be a JSON object, and every tensor's byte range must lie inside the data section
  and match its dtype and shape.
- PyTorch pickles (`pytorch_model.bin`) are read only by `load_pytorch_state`, through
  `torch.load(weights_only=True)`, whose unpickler builds tensors and plain containers
  and refuses everything else. A file that needs anything else is refused, never
  retried in the unsafe mode.
- HDF5 files are checked by `kbert.presets.weights_file.check_weights_file`.
"""

import json
import os
import pickle
import re
import struct

# A safetensors header describes tensors, not data: real ones are kilobytes. The
# safetensors library caps it at 100 MB too.
MAX_SAFETENSORS_HEADER_BYTES = 100_000_000
_HEADER_LENGTH_BYTES = 8

# safetensors dtype -> bytes per element.
SAFETENSORS_DTYPE_SIZES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E5M2": 1,
    "F8_E4M3": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "I64": 8,
    "U64": 8,
    "F64": 8,
}


def _refuse(path, reason):
    raise ValueError(f"Refusing to read {str(path)!r} as safetensors: {reason}.")


def check_safetensors_header(path):
    """Validates the header of the safetensors file `path` without reading tensor data.

    Returns:
        `{tensor_name: {"dtype", "shape", "data_offsets"}}` (the `__metadata__` entry
        left out).

    Raises:
        ValueError: naming the file and what is wrong (header length beyond the file,
            not JSON, unknown dtype, a byte range outside the data or not matching
            dtype and shape, overlapping tensors).
    """
    file_size = os.path.getsize(path)
    if file_size < _HEADER_LENGTH_BYTES:
        _refuse(path, f"the file has {file_size} bytes, fewer than the 8-byte header length")
    with open(path, "rb") as handle:
        (header_length,) = struct.unpack("<Q", handle.read(_HEADER_LENGTH_BYTES))
        if header_length > file_size - _HEADER_LENGTH_BYTES:
            _refuse(
                path,
                f"the header declares {header_length} bytes but the file has only "
                f"{file_size - _HEADER_LENGTH_BYTES} after the length field",
            )
        if header_length > MAX_SAFETENSORS_HEADER_BYTES:
            _refuse(
                path,
                f"the header declares {header_length} bytes, more than the "
                f"{MAX_SAFETENSORS_HEADER_BYTES} a tensor index can need",
            )
        raw_header = handle.read(header_length)
    try:
        header = json.loads(raw_header.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        _refuse(path, f"the header is not JSON ({error})")
    if not isinstance(header, dict):
        _refuse(path, f"the header is a JSON {type(header).__name__}, not an object")

    data_size = file_size - _HEADER_LENGTH_BYTES - header_length
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        tensors[name] = _check_entry(path, name, entry, data_size)
    ranges = sorted((entry["data_offsets"], name) for name, entry in tensors.items())
    for ((_, end), name), ((begin, _), next_name) in zip(ranges, ranges[1:]):
        if begin < end:
            _refuse(path, f"tensors {name!r} and {next_name!r} overlap")
    return tensors


def _check_entry(path, name, entry, data_size):
    if not isinstance(entry, dict):
        _refuse(path, f"tensor {name!r} is described by a {type(entry).__name__}, not an object")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype not in SAFETENSORS_DTYPE_SIZES:
        _refuse(
            path,
            f"tensor {name!r} has dtype {dtype!r}; known: {sorted(SAFETENSORS_DTYPE_SIZES)}",
        )
    if not isinstance(shape, list) or not all(_is_count(size) for size in shape):
        _refuse(path, f"tensor {name!r} has shape {shape!r}, not a list of sizes")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(_is_count(offset) for offset in offsets)
        or offsets[0] > offsets[1]
    ):
        _refuse(path, f"tensor {name!r} has data_offsets {offsets!r}, not [begin, end]")
    begin, end = offsets
    if end > data_size:
        _refuse(
            path,
            f"tensor {name!r} ends at byte {end} of a data section of {data_size} bytes",
        )
    expected = SAFETENSORS_DTYPE_SIZES[dtype]
    for size in shape:
        expected *= size
    if end - begin != expected:
        _refuse(
            path,
            f"tensor {name!r} ({dtype}, shape {shape}) needs {expected} bytes but its "
            f"data_offsets span {end - begin}",
        )
    return {"dtype": dtype, "shape": shape, "data_offsets": offsets}


def _is_count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def load_pytorch_state(path, torch):
    """`torch.load(path, weights_only=True)`, refusing (never retrying unsafely) on failure.

    Args:
        path: a PyTorch file (`pytorch_model.bin`).
        torch: the imported `torch` module.

    Raises:
        ValueError: when the file needs more than tensors and plain containers to
            unpickle (it could run code), or is not a PyTorch file.
    """
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        raise ValueError(
            f"Refusing to load {str(path)!r}: it is a pickle that asks for more than "
            "tensors and plain containers, so unpickling it could run code. kbert reads "
            "PyTorch files only with torch.load(weights_only=True) and never runs code "
            f"from a checkpoint. Convert the file to model.safetensors with a tool you "
            f"trust. (PyTorch: {_unpickler_reason(error)})"
        ) from None
    except (RuntimeError, EOFError, OSError) as error:
        raise ValueError(
            f"{str(path)!r} could not be read as plain tensors (torch.load with "
            f"weights_only=True): {_first_line(error)}"
        ) from None


def _unpickler_reason(error):
    # PyTorch's message explains how to switch the protection off; keep only the reason.
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))
    _, marker, reason = text.partition("WeightsUnpickler error:")
    lines = [line.strip() for line in reason.splitlines() if line.strip()] if marker else []
    if not lines:
        return _first_line(error)
    return lines[0].split(" by default.")[0]


def _first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
