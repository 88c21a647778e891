"""The tensors of a Hugging Face folder, by name and shape, before any is read.

Weights are `model.safetensors` or, from older versions, `pytorch_model.bin`; either may
be split into shards listed in a `.index.json`. Names are canonical: without the `bert.`
prefix (task models save the encoder under it, a bare `BertModel` does not) and with
legacy LayerNorm `gamma`/`beta` renamed, as transformers renames them on load.

Loading never runs code from the folder: a safetensors header is validated
(`safe_loading.check_safetensors_header`) and its shapes known before the tensors are
read, in bounded chunks and never memory-mapped (`safetensors_reader`); PyTorch pickles
are read only with `torch.load(weights_only=True)`, from the opened file.
"""

import pathlib

import numpy as np

from kbert.checkpoints.safe_loading import check_safetensors_header
from kbert.checkpoints.safe_loading import load_pytorch_state
from kbert.checkpoints.safetensors_reader import read_safetensors
from kbert.checkpoints.stored_tensors import StoredTensors
from kbert.files.bounded_reader import read_json

SAFETENSORS_FILE = "model.safetensors"
SAFETENSORS_INDEX_FILE = "model.safetensors.index.json"
PYTORCH_FILE = "pytorch_model.bin"
PYTORCH_INDEX_FILE = "pytorch_model.bin.index.json"
# In order of preference: safetensors cannot carry code, pickles can (we refuse it anyway).
WEIGHT_FILES = (SAFETENSORS_FILE, SAFETENSORS_INDEX_FILE, PYTORCH_FILE, PYTORCH_INDEX_FILE)
BACKBONE_PREFIX = "bert."
_BACKBONE_MODULES = ("embeddings", "encoder", "pooler")
# Checkpoints converted from TensorFlow by old transformers versions name LayerNorm
# parameters gamma/beta; transformers renames them on load and so do we.
_LEGACY_LAYER_NORM = {"LayerNorm.gamma": "LayerNorm.weight", "LayerNorm.beta": "LayerNorm.bias"}


def _weight_files(folder):
    if (folder / SAFETENSORS_FILE).is_file():
        return [folder / SAFETENSORS_FILE], _SafetensorsFile
    if (folder / SAFETENSORS_INDEX_FILE).is_file():
        return _shard_files(folder / SAFETENSORS_INDEX_FILE), _SafetensorsFile
    if (folder / PYTORCH_FILE).is_file():
        return [folder / PYTORCH_FILE], _PytorchFile
    if (folder / PYTORCH_INDEX_FILE).is_file():
        return _shard_files(folder / PYTORCH_INDEX_FILE), _PytorchFile
    raise ValueError(f"{folder} has no weights file; looked for {list(WEIGHT_FILES)}.")


def _shard_files(index_path):
    index = read_json(index_path, "config")
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise ValueError(f"{index_path} has no `weight_map` of tensor name -> shard file.")
    files = []
    for name in sorted(set(weight_map.values())):
        path = index_path.parent / str(name)
        # A shard name is a plain file name beside the index, never a path elsewhere.
        if not isinstance(name, str) or pathlib.Path(name).name != name or not path.is_file():
            raise ValueError(
                f"{index_path} lists shard {name!r}, which is not in {index_path.parent}."
            )
        files.append(path)
    return files


def _to_float32(value):
    # Half-precision checkpoints are widened: the model is built in float32.
    if np.issubdtype(value.dtype, np.floating) and value.dtype != np.float32:
        return value.astype(np.float32)
    return value


def _import_torch(reason):
    try:
        import torch
    except ImportError:
        raise ImportError(
            f"{reason}; reading it needs PyTorch, which is not installed. Install it "
            "(pip install torch), or save the checkpoint as float32 model.safetensors."
        ) from None
    return torch


class _SafetensorsFile:
    """A safetensors file: shapes from its validated header, arrays read on first use."""

    def __init__(self, path):
        self.path = path
        # The header is validated first, so a hostile one cannot make the reader
        # allocate more than the file holds.
        self.shapes = {
            name: tuple(entry["shape"]) for name, entry in check_safetensors_header(path).items()
        }
        self._arrays = None

    def array(self, name):
        if self._arrays is None:
            self._arrays = self._load()
        return self._arrays[name]

    def _load(self):
        return read_safetensors(self.path)


class _PytorchFile:
    """A `pytorch_model.bin`, unpickled with `weights_only=True`."""

    def __init__(self, path):
        self.path = path
        torch = _import_torch(f"{path} is a PyTorch file")
        state = load_pytorch_state(path, torch)
        if not isinstance(state, dict):
            raise ValueError(
                f"{path} must hold a dict of tensor name -> tensor. "
                f"Received: {type(state).__name__}"
            )
        for name, tensor in state.items():
            if not isinstance(tensor, torch.Tensor):
                raise ValueError(
                    f"{path}: entry {name!r} is a {type(tensor).__name__}, not a tensor."
                )
        self._state = state
        self.shapes = {name: tuple(tensor.shape) for name, tensor in state.items()}

    def array(self, name):
        tensor = self._state[name].detach().cpu()
        if tensor.is_floating_point():
            tensor = tensor.float()
        return tensor.numpy()


def canonical_name(file_name):
    """`file_name` without the `bert.` prefix, legacy LayerNorm names renamed."""
    name = file_name.removeprefix(BACKBONE_PREFIX)
    for legacy, current in _LEGACY_LAYER_NORM.items():
        if name.endswith(legacy):
            name = name[: -len(legacy)] + current
    return name


def is_backbone_name(name):
    """Whether the canonical `name` belongs to the encoder (prefixed `bert.` in task files)."""
    return name.split(".")[0] in _BACKBONE_MODULES


class HuggingFaceTensors:
    """Every tensor of a Hugging Face folder under its canonical name; nothing read yet.

    Args:
        folder: the Hugging Face folder.

    Raises:
        ValueError: for a missing or unreadable weights file, a shard outside the folder,
            a tensor in two shards or under two names.
        ImportError: for `pytorch_model.bin` when PyTorch is not installed.
    """

    def __init__(self, folder):
        self.folder = pathlib.Path(folder)
        paths, file_class = _weight_files(self.folder)
        self._locations = {}
        self.file_names = {}
        seen = set()
        for path in paths:
            weights_file = file_class(path)
            for file_name in weights_file.shapes:
                if file_name in seen:
                    raise ValueError(
                        f"Tensor {file_name!r} appears in more than one shard ({path})."
                    )
                seen.add(file_name)
                name = canonical_name(file_name)
                if name in self._locations:
                    raise ValueError(
                        f"{self.folder}: tensors {self.file_names[name]!r} and {file_name!r} "
                        "are the same weight under two names."
                    )
                self._locations[name] = (weights_file, file_name)
                self.file_names[name] = file_name
        self.prefixed = any(name.startswith(BACKBONE_PREFIX) for name in seen)

    def __contains__(self, name):
        return name in self._locations

    def shape(self, name):
        weights_file, file_name = self._locations[name]
        return weights_file.shapes[file_name]

    def alias(self, name, existing):
        """Lets `name` stand for the tensor stored as `existing` (a tied weight stored once)."""
        self._locations[name] = self._locations[existing]
        self.file_names[name] = self.file_names[existing]

    def display(self, name):
        """How `name` is (or would be) spelled in this folder's files."""
        if name in self.file_names:
            return self.file_names[name]
        return BACKBONE_PREFIX + name if is_backbone_name(name) and self.prefixed else name

    def array(self, name):
        weights_file, file_name = self._locations[name]
        return _to_float32(weights_file.array(file_name))

    def stored_tensors(self):
        """The tensors as `StoredTensors`, for `WeightMap.read`."""
        return StoredTensors(
            self.folder,
            {name: self.shape(name) for name in self._locations},
            self.array,
            noun="weight",
            display=self.display,
        )
