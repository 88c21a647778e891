"""How much memory one load may allocate, and declared sizes checked against real storage.

A checkpoint declares its tensors' shapes before their data. Two checks keep those
declarations honest before anything is allocated:

- `check_load_budget`: the bytes a load will allocate (a config's parameters, a file's
  tensors) must fit the load budget, 8 GiB by default (BERT-large in float32 is
  1.3 GB). Raise it for a genuinely larger model with the environment variable
  `KBERT_LOAD_BUDGET` (bytes, or with a unit: `32G`, `500M`) or `kbert --load-budget`.
- `check_stored_bytes`: a file's declared data must be backed by what it stores on disk.
  A sparse file (a 6 GB "file" of 20 KB) or a compressed entry (3 MB inflating to 3 GB)
  declares what its storage does not hold, and reading it would allocate the lot.
"""

import os
import re

from kbert.files.file_refused_error import FileRefusedError

BUDGET_VARIABLE = "KBERT_LOAD_BUDGET"
DEFAULT_BUDGET_BYTES = 8 * 2**30
# Declared data may exceed the stored bytes by this factor plus margin: file-system
# compression shrinks float weights by far less, while a sparse or compressed bomb
# declares thousands of times what it stores.
STORAGE_FACTOR = 4
STORAGE_MARGIN_BYTES = 16 * 2**20
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_AMOUNT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", re.IGNORECASE)


def parse_byte_amount(text, name=BUDGET_VARIABLE):
    """`text` ("8589934592", "8G", "500MiB", "1.5T") as a number of bytes."""
    match = _AMOUNT.fullmatch(str(text))
    if match is None or float(match.group(1)) <= 0:
        raise ValueError(
            f"`{name}` must be a positive number of bytes, optionally with a unit K, M, G "
            f"or T (e.g. 16G). Received: {name}={text!r}"
        )
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def load_budget_bytes():
    """The most bytes one load may allocate: `KBERT_LOAD_BUDGET`, else 8 GiB."""
    value = os.environ.get(BUDGET_VARIABLE)
    if not value:
        return DEFAULT_BUDGET_BYTES
    return parse_byte_amount(value)


def check_load_budget(source, declared_bytes, what):
    """Refuses a load of `declared_bytes` beyond the budget, naming `source` and `what`."""
    budget = load_budget_bytes()
    if declared_bytes > budget:
        raise ValueError(
            f"{source}: {what} need {declared_bytes} bytes, more than the load budget of "
            f"{budget} bytes. If the checkpoint is genuine, raise the budget with "
            f"`kbert --load-budget` or {BUDGET_VARIABLE} (e.g. {BUDGET_VARIABLE}=32G)."
        )


def stored_bytes(path):
    """The bytes the file `path` (or open descriptor) occupies on disk (its blocks where known)."""
    status = os.stat(path)
    blocks = getattr(status, "st_blocks", None)
    return status.st_size if blocks is None else min(status.st_size, blocks * 512)


def check_stored_bytes(path, declared_bytes, stored=None, what="its tensors"):
    """Refuses `path` when `declared_bytes` far exceed the bytes it stores (`stored`)."""
    stored = stored_bytes(path) if stored is None else stored
    if declared_bytes > STORAGE_FACTOR * stored + STORAGE_MARGIN_BYTES:
        raise FileRefusedError(
            path,
            f"{what} declare {declared_bytes} bytes but only {stored} are stored on disk "
            "(a sparse or compressed file); reading it would allocate data that is not there",
        )
