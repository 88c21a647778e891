"""What makes an ONNX graph a Keras model's: checks before its session runs and on its outputs.

A graph in the engine's cache is what kbert exported from the model's weights; these
checks make sure that what ONNX Runtime computes still answers the model's questions:
its inputs and outputs are the model's (names, int32 inputs, the model's fixed
dimensions: as many logits as the model has labels), and every batch's outputs have
the batch's rows, the model's fixed dimensions, dynamic ones taken from the inputs
(length, choices, masks), and only finite values. A graph that fails them is refused
with one sentence naming it and the remedy (`remedy`).
"""

import math
import os
import pathlib

import numpy as np

# Room a graph takes beyond its weights (nodes, names, shapes), at any model size.
GRAPH_OVERHEAD_BYTES = 64 << 20


def graph_size_limit(model):
    """The most bytes a graph of `model` may have: twice its float32 weights, and
    `GRAPH_OVERHEAD_BYTES` for the rest (a graph stores each weight once)."""
    weights = sum(4 * math.prod(int(size) for size in variable.shape)
                  for variable in model.weights)
    return 2 * weights + GRAPH_OVERHEAD_BYTES


def remedy(graph_path):
    """What the user can do about a graph ONNX Runtime cannot run, as the end of a sentence."""
    folder = pathlib.Path(graph_path).parent
    return (f"delete the folder {str(folder)!r} to have the graph made again, or run the "
            "model on Keras (engine='keras'; --engine keras on the command line)")


def read_graph(path, max_bytes, folder):
    """The bytes of the graph file `path` (at most `max_bytes`), through the bounded reader:
    a link at `path`, or a file outside `folder` by real path, is refused unread."""
    from kbert.files import FileRefusedError
    from kbert.files import open_checked

    path = pathlib.Path(path)
    if path.is_symlink():
        raise FileRefusedError(path, "it is a symbolic link, which kbert does not follow")
    with open_checked(path, None, folder) as file:
        size = os.fstat(file.fileno()).st_size
        if size > max_bytes:
            raise ValueError(
                f"{str(path)!r} has {size} bytes, more than the {max_bytes} expected")
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"{str(path)!r} grew beyond {max_bytes} bytes while it was read")
    return data


def check_session(session, model, graph_path):
    """Raises unless the session's inputs and outputs are `model`'s.

    Returns:
        The model's output shapes by output name (None for a dynamic dimension; an
        empty dict when the model has no symbolic outputs to compare with).
    """
    from kbert.inference.onnx_export import output_names

    expected_inputs = _symbolic(model, "input")
    graph_inputs = {graph_input.name: graph_input.type for graph_input in session.get_inputs()}
    if isinstance(expected_inputs, dict) and set(graph_inputs) != set(expected_inputs):
        _refuse(graph_path, f"its inputs are {sorted(graph_inputs)}, the model's "
                            f"{sorted(expected_inputs)}")
    wrong_types = {name: kind for name, kind in graph_inputs.items() if kind != "tensor(int32)"}
    if wrong_types:
        _refuse(graph_path, f"its inputs must be int32 tensors. Received: {wrong_types}")
    outputs = _symbolic(model, "output")
    if outputs is None:
        return {}
    names = output_names(model)
    expected = {name: tuple(outputs[name].shape if isinstance(outputs, dict) else outputs.shape)
                for name in names}
    declared = {output.name: output.shape for output in session.get_outputs()}
    if set(declared) != set(names):
        _refuse(graph_path, f"its outputs are {sorted(declared)}, the model's {names}")
    for name, shape in declared.items():
        if shape is None:
            continue
        if len(shape) != len(expected[name]) or any(
                isinstance(size, int) and isinstance(want, int) and size != want
                for size, want in zip(shape, expected[name])):
            _refuse(graph_path, f"its output `{name}` has the shape {_shown(shape)}, where the "
                                f"model gives {_shown(expected[name])}")
    return expected


def check_outputs(outputs, expected_shapes, feed, graph_path):
    """Raises unless every output (name -> array) has the shape the model gives for the
    batch `feed` (name -> int32 array) and finite values only."""
    batch_shape = next(iter(feed.values())).shape if feed else ()
    batch = batch_shape[0] if batch_shape else None
    input_sizes = {size for value in feed.values() for size in value.shape[1:]}
    for name, value in outputs.items():
        value = np.asarray(value)
        expected = expected_shapes.get(name)
        if expected is not None and not _fits(value.shape, expected, batch, input_sizes):
            _refuse(graph_path, f"it gave `{name}` of shape {value.shape} for inputs of shape "
                                f"{batch_shape}, where the model gives {_shown(expected)}")
        if not np.issubdtype(value.dtype, np.floating):
            _refuse(graph_path, f"it gave `{name}` as {value.dtype}, not floating point numbers")
        if not np.isfinite(value).all():
            _refuse(graph_path, f"it gave NaN or infinite values in `{name}`")


def _fits(shape, expected, batch, input_sizes):
    """Whether `shape` is `expected` (None: dynamic) for `batch` rows and inputs whose
    other dimensions are `input_sizes` (the length, choices, mask positions)."""
    if len(shape) != len(expected) or (batch is not None and shape and shape[0] != batch):
        return False
    return all(size == want if want is not None else size in input_sizes
               for size, want in zip(shape[1:], expected[1:]))


def _symbolic(model, which):
    """`model.input` or `model.output` (a tensor or a dict of them), or None without one."""
    try:
        return getattr(model, which)
    except (AttributeError, ValueError):
        return None


def _shown(shape):
    return "(" + ", ".join("batch" if index == 0 and not isinstance(size, int)
                           else str(size) if isinstance(size, int) else "any"
                           for index, size in enumerate(shape)) + ")"


def _refuse(graph_path, problem):
    raise ValueError(
        f"The ONNX graph {str(graph_path)!r} is not this model's: {problem}; "
        f"{remedy(graph_path)}"
    )
