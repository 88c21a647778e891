"""kbert's weight file: one HDF5 dataset per variable, named by its path in the model.

The reader opens only plain data: it walks the file link by link and refuses external
links, soft links, external storage, virtual datasets, compression filters, non-numeric
dtypes and datasets larger than the file itself (one by one and all together), before
reading a single value. `check_weights_file` runs the same checks on any HDF5 weights
file, such as the Keras `.weights.h5` files of keras-hub presets, before another
library reads it.
"""

import os

import h5py
import numpy as np

FORMAT_VERSION = 1


def write_weights(path, weights):
    """Writes `{"group/variable/path": array}` to the HDF5 file `path`."""
    with h5py.File(path, "w") as handle:
        handle.attrs["kbert_weights_format"] = FORMAT_VERSION
        for name, value in sorted(weights.items()):
            handle.create_dataset(name, data=np.asarray(value))


def _refuse(path, name, reason):
    raise ValueError(f"Refusing to read weights file {str(path)!r}: `{name}` {reason}.")


def _walk(path, group, prefix, file_size, found):
    for key in group.keys():
        name = f"{prefix}{key}"
        link = group.get(key, getlink=True)
        if isinstance(link, h5py.ExternalLink):
            _refuse(path, name, f"is an external link to {link.filename!r}")
        if not isinstance(link, h5py.HardLink):
            _refuse(path, name, f"is a {type(link).__name__}, not plain data")
        item = group[key]
        if isinstance(item, h5py.Group):
            _walk(path, item, name + "/", file_size, found)
            continue
        if not isinstance(item, h5py.Dataset):
            _refuse(path, name, f"is a {type(item).__name__}, not a dataset")
        if item.is_virtual:
            _refuse(path, name, "is a virtual dataset (it reads other files)")
        if item.external:
            _refuse(path, name, "keeps its data in external files")
        if item.compression is not None or item.id.get_create_plist().get_nfilters():
            _refuse(path, name, "uses compression filters, which kbert never writes")
        if item.dtype.kind not in "fiub":
            _refuse(path, name, f"has dtype {item.dtype}, not a numeric array")
        declared = int(np.prod(item.shape, dtype=np.int64)) * item.dtype.itemsize
        if declared > file_size:
            _refuse(
                path,
                name,
                f"declares {declared} bytes (shape {item.shape}) in a file of {file_size} bytes",
            )
        found[name] = item


def _checked_datasets(path, handle):
    file_size = os.path.getsize(path)
    datasets = {}
    _walk(path, handle, "", file_size, datasets)
    total = sum(
        int(np.prod(dataset.shape, dtype=np.int64)) * dataset.dtype.itemsize
        for dataset in datasets.values()
    )
    if total > file_size:
        raise ValueError(
            f"Refusing to read weights file {str(path)!r}: its datasets declare {total} "
            f"bytes in all, more than the file's {file_size} bytes."
        )
    return datasets


def _open(path):
    try:
        return h5py.File(path, "r")
    except OSError as error:
        raise ValueError(f"Cannot open weights file {str(path)!r}: {error}") from error


def check_weights_file(path):
    """Checks an HDF5 weights file without reading any data from it.

    Returns:
        `{"group/dataset/path": (shape, dtype)}` for every dataset.

    Raises:
        ValueError: naming the offending entry, for anything `read_weights` refuses.
    """
    with _open(path) as handle:
        return {
            name: (tuple(dataset.shape), dataset.dtype)
            for name, dataset in _checked_datasets(path, handle).items()
        }


def read_weights(path):
    """Reads a weights file into `{"group/variable/path": np.ndarray}`, checking it first."""
    with _open(path) as handle:
        datasets = _checked_datasets(path, handle)
        return {name: dataset[()] for name, dataset in datasets.items()}
