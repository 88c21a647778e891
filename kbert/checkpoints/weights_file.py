"""kbert's weight file: one HDF5 dataset per variable, named by its path in the model.

The reader opens only plain data, after checking the whole file without reading a value:

- the file itself is opened by `kbert.files.bounded_reader.open_checked` (a regular file
  inside the folder, every folder on the way included) and HDF5 reads that open file,
  never the path again; a damaged file is one line, without HDF5's internals;
- it walks the file link by link and refuses external links, soft links, external
  storage, virtual datasets, compression filters, non-numeric dtypes, an object reached
  twice (a hard-link cycle would recurse forever), groups nested deeper than
  `MAX_GROUP_DEPTH`, and more than `MAX_OBJECTS` objects (each costs memory to open);
- every dataset must store the bytes it declares (no unallocated data read back as
  fill values), and all of them together must fit in the file, in what the file really
  stores on disk (a sparse file is refused) and in the load budget
  (`kbert.files.load_budget`).

`check_weights_file` runs the same checks on any HDF5 weights file, such as the Keras
`.weights.h5` files of keras-hub presets, before their data is read.

The writer checks the free space first and turns a full disk into one `OSError`.
"""

import contextlib
import os

import h5py
import numpy as np

from kbert.files.atomic_write import check_free_space
from kbert.files.atomic_write import raise_if_disk_full
from kbert.files.bounded_reader import open_checked
from kbert.files.load_budget import check_load_budget
from kbert.files.load_budget import check_stored_bytes
from kbert.files.load_budget import stored_bytes

FORMAT_VERSION = 1
# BERT-large has about 400 variables, its training checkpoint (with Adam's two moments)
# about 1,200; keras-hub's files a few thousand groups and datasets.
MAX_OBJECTS = 20_000
MAX_GROUP_DEPTH = 32
# HDF5's own bytes per dataset (object header, B-tree entry), for the free-space check.
_DATASET_OVERHEAD_BYTES = 4096


def write_weights(path, weights, attributes=None):
    """Writes `{"group/variable/path": array}` to the HDF5 file `path`.

    Args:
        path: the file to write.
        weights: the arrays by dataset path.
        attributes: the file's root attributes; by default kbert's format marker.
            Files for other libraries (keras-hub's) pass `{}`.

    Raises:
        OSError: errno ENOSPC, before anything is written when the disk lacks the room,
            or when it fills during the write (the partial file is deleted).
    """
    arrays = {name: np.asarray(value) for name, value in weights.items()}
    needed = sum(array.nbytes + _DATASET_OVERHEAD_BYTES for array in arrays.values())
    check_free_space(os.path.dirname(os.path.abspath(path)), needed, path)
    handle = h5py.File(path, "w")
    try:
        if attributes is None:
            attributes = {"kbert_weights_format": FORMAT_VERSION}
        for key, value in attributes.items():
            handle.attrs[key] = value
        for name, value in sorted(arrays.items()):
            handle.create_dataset(name, data=value)
        handle.close()
    except BaseException as error:
        # Closed and deleted here, before the error travels on: h5py would otherwise
        # flush the broken file again when the handle is collected.
        with contextlib.suppress(Exception):
            handle.close()
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise_if_disk_full(error, path)
        raise


def _refuse(path, name, reason):
    raise ValueError(f"Refusing to read weights file {str(path)!r}: `{name}` {reason}.")


def _declared_bytes(dataset):
    return int(np.prod(dataset.shape, dtype=np.int64)) * dataset.dtype.itemsize


class _Walk:
    """Visits every object of an HDF5 file once, refusing what kbert never reads."""

    def __init__(self, path, file_size):
        self.path = path
        self.file_size = file_size
        self.datasets = {}
        self.visited = set()

    def group(self, group, prefix, depth):
        if depth > MAX_GROUP_DEPTH:
            _refuse(
                self.path, prefix.rstrip("/"), f"is nested more than {MAX_GROUP_DEPTH} groups deep"
            )
        if len(self.visited) + len(group) > MAX_OBJECTS:
            _refuse(
                self.path,
                prefix.rstrip("/") or "/",
                f"brings the file beyond {MAX_OBJECTS} objects; a weights file has far fewer",
            )
        for key in group.keys():
            self.link(group, key, f"{prefix}{key}", depth)

    def link(self, group, key, name, depth):
        link = group.get(key, getlink=True)
        if isinstance(link, h5py.ExternalLink):
            _refuse(self.path, name, f"is an external link to {link.filename!r}")
        if not isinstance(link, h5py.HardLink):
            _refuse(self.path, name, f"is a {type(link).__name__}, not plain data")
        item = group[key]
        address = h5py.h5o.get_info(item.id).addr
        if address in self.visited:
            _refuse(self.path, name, "is a second link to an object already seen (a link cycle?)")
        self.visited.add(address)
        if isinstance(item, h5py.Group):
            self.group(item, name + "/", depth + 1)
            return
        if not isinstance(item, h5py.Dataset):
            _refuse(self.path, name, f"is a {type(item).__name__}, not a dataset")
        self.dataset(item, name)

    def dataset(self, item, name):
        if item.is_virtual:
            _refuse(self.path, name, "is a virtual dataset (it reads other files)")
        if item.external:
            _refuse(self.path, name, "keeps its data in external files")
        if item.compression is not None or item.id.get_create_plist().get_nfilters():
            _refuse(self.path, name, "uses compression filters, which kbert never writes")
        if item.dtype.kind not in "fiub":
            _refuse(self.path, name, f"has dtype {item.dtype}, not a numeric array")
        declared = _declared_bytes(item)
        if declared > self.file_size:
            _refuse(
                self.path,
                name,
                f"declares {declared} bytes (shape {item.shape}) in a file of "
                f"{self.file_size} bytes",
            )
        stored = item.id.get_storage_size()
        if stored < declared:
            _refuse(
                self.path,
                name,
                f"declares {declared} bytes (shape {item.shape}) but stores {stored}",
            )
        self.datasets[name] = item


def _checked_datasets(path, handle, file):
    file_size = os.fstat(file.fileno()).st_size
    walk = _Walk(path, file_size)
    walk.group(handle, "", 0)
    total = sum(_declared_bytes(dataset) for dataset in walk.datasets.values())
    if total > file_size:
        raise ValueError(
            f"Refusing to read weights file {str(path)!r}: its datasets declare {total} "
            f"bytes in all, more than the file's {file_size} bytes."
        )
    check_stored_bytes(path, total, stored=stored_bytes(file.fileno()), what="its datasets")
    check_load_budget(path, total, "its datasets")
    return walk.datasets


@contextlib.contextmanager
def _open(path, folder):
    # HDF5 reads through the file object kbert opened (its folder chain pinned), never
    # by path, so the file read is the file checked.
    with open_checked(path, None, folder) as file:
        try:
            handle = h5py.File(file, "r")
        except OSError:
            raise ValueError(_unreadable(path)) from None
        with handle:
            yield handle, file


def _unreadable(path):
    return (
        f"Cannot read weights file {str(path)!r}: it is not a readable HDF5 file "
        "(damaged, truncated or of another format)."
    )


def check_weights_file(path, folder=None):
    """Checks an HDF5 weights file without reading any data from it.

    Args:
        path: the file.
        folder: the model folder it must stay inside (links included); by default the
            folder holding it.

    Returns:
        `{"group/dataset/path": (shape, dtype)}` for every dataset.

    Raises:
        ValueError: naming the offending entry, for anything `read_weights` refuses.
    """
    with _open(path, folder) as (handle, file):
        try:
            return {
                name: (tuple(dataset.shape), dataset.dtype)
                for name, dataset in _checked_datasets(path, handle, file).items()
            }
        except (OSError, RuntimeError, KeyError):
            # HDF5 met damaged metadata while walking the file.
            raise ValueError(_unreadable(path)) from None


def read_weights(path, folder=None):
    """Reads a weights file into `{"group/variable/path": np.ndarray}`, checking it first.

    Args:
        path: the file.
        folder: as in `check_weights_file`.
    """
    with _open(path, folder) as (handle, file):
        try:
            datasets = _checked_datasets(path, handle, file)
            return {name: dataset[()] for name, dataset in datasets.items()}
        except (OSError, RuntimeError, KeyError):
            raise ValueError(_unreadable(path)) from None
