"""safetensors files read into memory in bounded chunks, never memory-mapped.

A memory-mapped file that is truncated while it is read kills the process with SIGBUS;
plain reads see the end of the file instead. `read_safetensors` opens the file once
through the bounded reader (its folder chain pinned), validates the header
(`safe_loading.safetensors_header`), then reads each tensor's bytes with reads of at
most `CHUNK_BYTES`. A file that ends early or whose size changes during the read is
refused with one sentence naming it.
"""

import os

import numpy as np

from kbert.checkpoints.safe_loading import safetensors_header
from kbert.files.bounded_reader import open_checked

CHUNK_BYTES = 16 * 2**20
# safetensors dtype -> the NumPy dtype its bytes are read as (little-endian).
# bfloat16, which NumPy lacks, is read as its 16 bits and widened to float32.
NUMPY_DTYPES = {
    "BOOL": "?",
    "U8": "u1",
    "I8": "i1",
    "I16": "<i2",
    "U16": "<u2",
    "F16": "<f2",
    "BF16": "<u2",
    "I32": "<i4",
    "U32": "<u4",
    "F32": "<f4",
    "I64": "<i8",
    "U64": "<u8",
    "F64": "<f8",
}


def _changed(path, what):
    return ValueError(
        f"Cannot read {str(path)!r}: {what} while it was read; the file changed during the "
        "read. Load it again once nothing is writing it."
    )


def read_safetensors(path, folder=None):
    """`{name: np.ndarray}` of the safetensors file `path`, bfloat16 widened to float32.

    Args:
        path: the file.
        folder: the model folder it must stay inside; by default the one holding it.

    Raises:
        ValueError: for a header `check_safetensors_header` refuses, a dtype NumPy cannot
            hold (float8), or a file that ends early or changes size while it is read.
    """
    with open_checked(path, None, folder) as handle:
        size = os.fstat(handle.fileno()).st_size
        tensors, data_start = safetensors_header(path, handle)
        arrays = {}
        for name, entry in tensors.items():
            if entry["dtype"] not in NUMPY_DTYPES:
                raise ValueError(
                    f"{str(path)!r}: tensor {name!r} has dtype {entry['dtype']}, which kbert "
                    "cannot read; save the checkpoint in float32, float16 or bfloat16."
                )
            begin, end = entry["data_offsets"]
            raw = _read_range(path, handle, data_start + begin, end - begin, size)
            arrays[name] = _as_array(raw, entry)
        current = os.fstat(handle.fileno()).st_size
        if current != size:
            raise _changed(path, f"its size went from {size} to {current} bytes")
    return arrays


def _read_range(path, handle, start, length, size):
    """`length` bytes of `handle` from `start`, read `CHUNK_BYTES` at a time."""
    buffer = bytearray(length)
    view = memoryview(buffer)
    handle.seek(start)
    done = 0
    while done < length:
        count = handle.readinto(view[done : done + CHUNK_BYTES])
        if not count:
            raise _changed(path, f"it ended at byte {start + done} of {size}")
        done += count
        current = os.fstat(handle.fileno()).st_size
        if current != size:
            raise _changed(path, f"its size went from {size} to {current} bytes")
    return buffer


def _as_array(raw, entry):
    array = np.frombuffer(raw, dtype=NUMPY_DTYPES[entry["dtype"]]).reshape(entry["shape"])
    if entry["dtype"] == "BF16":
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array
