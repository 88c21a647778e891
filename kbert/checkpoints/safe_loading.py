"""Checks that make opening a weights file safe: no code runs, nothing oversized is allocated.

Every file is opened by `kbert.files.bounded_reader.open_checked` (a regular file inside
the model folder, every folder on the way included) and read from that open file, never
memory-mapped: a file truncated while it is read gives an error, not a SIGBUS.

- safetensors: the header is validated by `check_safetensors_header` before the
  tensors are read in bounded chunks (`safetensors_reader`): its declared length must
  fit in the file and in `MAX_SAFETENSORS_HEADER_BYTES`, it must be a JSON object nested no deeper than the
  bounded reader allows, every tensor's byte range must lie inside the data section and
  match its dtype and shape, and the data must be stored on disk (not a sparse file's
  hole) and fit the load budget (`kbert.files.load_budget`).
- PyTorch pickles (`pytorch_model.bin`) are read only by `load_pytorch_state`, through
  `torch.load(weights_only=True)` on the opened file, whose unpickler
  builds tensors and plain containers and refuses everything else. A file that needs
  anything else is refused, never retried in the unsafe mode. In the zip container,
  the entries' uncompressed sizes are checked against the stored bytes (a 3 MB file
  inflating to 3 GB is refused) and the load budget before torch reads them.
- HDF5 files are checked by `kbert.checkpoints.weights_file.check_weights_file`.
"""

import os
import pickle
import re
import struct
import zipfile

from kbert.files.bounded_reader import SIZE_LIMITS
from kbert.files.bounded_reader import open_checked
from kbert.files.bounded_reader import parse_json
from kbert.files.load_budget import check_load_budget
from kbert.files.load_budget import check_stored_bytes
from kbert.files.load_budget import stored_bytes

# A safetensors header describes tensors, not data: real ones are kilobytes (BERT-large's
# is 40 KB).
MAX_SAFETENSORS_HEADER_BYTES = SIZE_LIMITS["header"]
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


def check_safetensors_header(path, folder=None):
    """Validates the header of the safetensors file `path` without reading tensor data.

    Args:
        path: the file.
        folder: the model folder it must stay inside; by default the one holding it.

    Returns:
        `{tensor_name: {"dtype", "shape", "data_offsets"}}` (the `__metadata__` entry
        left out).

    Raises:
        ValueError: naming the file and what is wrong (header length beyond the file,
            not JSON or nested too deeply, unknown dtype, a byte range outside the data or
            not matching dtype and shape, overlapping tensors, data not stored on disk
            or beyond the load budget).
    """
    with open_checked(path, None, folder) as handle:
        tensors, _ = safetensors_header(path, handle)
    return tensors


def safetensors_header(path, handle):
    """`(tensors, data_start)` of the safetensors file open as `handle`, validated.

    `tensors` as `check_safetensors_header` returns them; `data_start` is the byte of
    the file where the data section (the origin of every `data_offsets`) begins.
    """
    file_size = os.fstat(handle.fileno()).st_size
    if file_size < _HEADER_LENGTH_BYTES:
        _refuse(path, f"the file has {file_size} bytes, fewer than the 8-byte header length")
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
        header = parse_json(raw_header, f"{path} (safetensors header)")
    except ValueError as error:
        _refuse(path, f"the header is not usable JSON ({error})")
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
    declared = sum(end - begin for (begin, end), _ in ranges)
    check_stored_bytes(path, declared, stored=stored_bytes(handle.fileno()))
    check_load_budget(path, declared, "its tensors")
    return tensors, _HEADER_LENGTH_BYTES + header_length


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
            unpickle (it could run code), is not a PyTorch file, or (zip container)
            declares more data than it stores or than the load budget allows.
    """
    with open_checked(path) as handle:
        if zipfile.is_zipfile(handle):
            _check_zip_entries(path, handle)
        handle.seek(0)
        return _torch_load(path, handle, torch)


def _torch_load(path, handle, torch):
    try:
        # Read from the file kbert opened, never memory-mapped: a file truncated during
        # the read is an error, not a SIGBUS.
        return torch.load(handle, map_location="cpu", weights_only=True)
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


def _check_zip_entries(path, handle):
    """Refuses a torch zip whose entries inflate beyond what the file stores."""
    try:
        with zipfile.ZipFile(handle) as archive:
            declared = sum(entry.file_size for entry in archive.infolist())
    except (zipfile.BadZipFile, OSError) as error:
        raise ValueError(f"{str(path)!r} is not a readable PyTorch zip file: {error}") from None
    check_stored_bytes(
        path, declared, stored=stored_bytes(handle.fileno()), what="its zip entries"
    )
    check_load_budget(path, declared, "its zip entries")


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
