"""ONNX graphs of kbert models, for ONNX Runtime: Keras' own `model.export(format="onnx")`.

The graph is the model's forward pass (`call`): a task model gives what it computes (a
masked-LM its logits at `mask_positions`, a classifier its logits, a question answerer
`start_logits` and `end_logits`, a backbone `sequence_output` and `pooled_output`).
Its inputs are named as the model's (`token_ids`, `segment_ids`, `padding_mask`, and
`mask_positions` for a masked-LM), int32, with dynamic batch and length axes
(`batch`, `length`; `choices` for multiple choice, `masks` for the mask positions); a single output is named `logits`.

Keras exports to ONNX through tf2onnx on the TensorFlow backend, which is the one used
here: on JAX Keras needs jax2onnx (not a kbert dependency), and the PyTorch exporter
traces the sequence length into a constant. Under another backend the model is saved
as a preset and a `kbert export --format onnx` child process on TensorFlow writes the
graph, which is copied to its place. What an export writes on the way goes into a
scratch folder beside the graph's file (`scratch_folder`), never `$TMPDIR`: nothing is
renamed across file systems, and a full disk is named as the graph's. tf2onnx has no
ONNX form of TensorFlow's `Erfc` (in the exact GELU); the graph is repaired with
`1 - Erf(x)`.

The layers are traced in the forms ONNX Runtime's optimizer fuses
(`kbert.layers.onnx_export_forms`), and `fusable_graph` undoes the two tf2onnx rewrites
that would hide them; at BERT-base the optimized graph has 461 nodes instead of 1,753
(benchmarks/NOTES.md section 8).
"""

import contextlib
import errno
import logging
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

from kbert.files.atomic_write import atomic_path
from kbert.files.atomic_write import raise_if_disk_full
from kbert.files.atomic_write import remove_stale_temporaries
from kbert.files.atomic_write import temporary_prefix
from kbert.layers.onnx_export_forms import onnx_export_forms
from kbert.optional_packages import require_extra

logger = logging.getLogger("kbert.inference")

# The backend whose Keras exporter kbert uses.
EXPORT_BACKEND = "tensorflow"
# The ONNX file of an exported folder or cache entry.
ONNX_FILE = "model.onnx"
# The name of a model's single output in the graph.
SINGLE_OUTPUT = "logits"
# Names of the dynamic axes of the inputs, by rank; `mask_positions` has its own.
_AXIS_NAMES = {2: ("batch", "length"), 3: ("batch", "choices", "length")}
_MASK_AXES = ("batch", "masks")
# Names of what `fusable_graph` adds.
_FORMS_PREFIX = "kbert_forms/"
# How `kbert export` prints its error (`kbert.cli`), and a full disk in it (`OSError`'s
# "[Errno 28] message").
_CHILD_ERROR_PREFIX = "kbert export: error: "
DISK_FULL_ERRNOS = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
_DISK_FULL_MESSAGE = re.compile(
    rf"\[Errno (?:{'|'.join(str(number) for number in DISK_FULL_ERRNOS)})\] (.*)")


def export_graph(model, path, tokenizer=None):
    """Writes the ONNX graph of `model` (a task model or a `BertBackbone`) to `path`.

    Args:
        model: a kbert Keras model, float32 (the precision ONNX export supports).
        path: the `.onnx` file to write; written to a temporary file, then renamed.
        tokenizer: saved with the model for the child process under another backend;
            defaults to `model.tokenizer` (None for a backbone without one).

    Returns:
        `path` as a `pathlib.Path`.

    Raises:
        ValueError: for a model whose precision is not float32.
        ModuleNotFoundError: when onnx, tf2onnx or TensorFlow is missing, naming the extra.
    """
    import keras

    path = pathlib.Path(path)
    policies = {getattr(getattr(part, "dtype_policy", None), "name", "float32")
                for part in (model, getattr(model, "backbone", model))}
    dtypes = {str(variable.dtype) for variable in model.weights}
    if policies | dtypes != {"float32"}:
        policy = sorted((policies | dtypes) - {"float32"})[0]
        raise ValueError(
            f"ONNX export needs a float32 model; load it with dtype='float32'. "
            f"Received: a model in {policy!r}"
        )
    require_extra("onnx", "ONNX export")
    if keras.config.backend() == EXPORT_BACKEND:
        return _export_in_process(model, path)
    if tokenizer is None:
        tokenizer = getattr(model, "tokenizer", None)
    try:
        _export_in_child_process(model, path, tokenizer)
    except OSError as error:
        if error.errno in DISK_FULL_ERRNOS:  # it names a file of the scratch folder
            raise OSError(error.errno,
                          f"No space left on the device while writing {str(path)!r}") from None
        raise
    return path


def _export_in_child_process(model, path, tokenizer):
    """`model` saved as a preset, exported by a child process, and its graph copied to `path`."""
    with scratch_folder(path) as folder:
        preset = folder / "preset"
        model.save_to_preset(preset, tokenizer=tokenizer)
        exported = folder / "exported"
        export_in_child(preset, exported)
        graph = exported / ONNX_FILE
        with atomic_path(path, expected_bytes=graph.stat().st_size) as temporary:
            shutil.copyfile(graph, temporary)


@contextlib.contextmanager
def scratch_folder(path):
    """A new folder beside `path` for the files an export of `path` makes on the way.

    Beside `path`, it is on its file system: nothing is renamed across file systems
    (a `$TMPDIR` on tmpfs, the cache on disk), and a full disk is the one `path` is
    written to. It is removed afterwards; named as `path`'s temporaries, one left by a
    killed process is removed by the next write of `path`
    (`kbert.files.atomic_write.remove_stale_temporaries`).
    """
    path = pathlib.Path(path)
    remove_stale_temporaries(path)
    folder = tempfile.mkdtemp(prefix=f"{temporary_prefix(path)}{os.getpid()}-", dir=path.parent)
    try:
        yield pathlib.Path(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def export_in_child(source, destination, overwrite=False):
    """Runs `kbert export SOURCE DESTINATION --format onnx` on the TensorFlow backend.

    Raises:
        OSError: with the child's error message when it fails (the command line prints
            it as the error); errno ENOSPC, and the child's sentence, for a full disk.
    """
    require_extra("tensorflow", "ONNX export")
    require_extra("tf2onnx", "ONNX export")
    command = [sys.executable, "-m", "kbert.cli", "export", str(source), str(destination),
               "--format", "onnx"]
    if overwrite:
        command.append("--overwrite")
    environment = dict(os.environ, KERAS_BACKEND=EXPORT_BACKEND, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(command, env=environment, capture_output=True, text=True)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit status {done.returncode}"
        # The child's own error line: its message without the command's prefix.
        reason = reason.removeprefix(_CHILD_ERROR_PREFIX)
        full = _DISK_FULL_MESSAGE.match(reason)
        if full is not None:
            raise OSError(errno.ENOSPC, full.group(1))
        raise OSError(f"The ONNX export on the TensorFlow backend failed: {reason}")


def input_signature(model):
    """One int32 `keras.InputSpec` per model input, by name, with the model's axes."""
    import keras

    return [
        {
            name: keras.InputSpec(shape=tuple(tensor.shape), dtype="int32", name=name)
            for name, tensor in model.input.items()
        }
    ]


def output_names(model):
    """The graph's output names, in its order: a dict model's keys, sorted, else `logits`."""
    if isinstance(model.output, dict):
        return sorted(model.output)
    return [SINGLE_OUTPUT]


def _export_in_process(model, path):
    onnx = require_extra("onnx", "ONNX export")
    require_extra("tf2onnx", "ONNX export")
    tf2onnx_logger = logging.getLogger("tf2onnx")
    level = tf2onnx_logger.level
    # It logs the Erfc it cannot convert as an error; `repair_graph` replaces it.
    tf2onnx_logger.setLevel(logging.CRITICAL)
    try:
        with scratch_folder(path) as folder:
            raw = folder / ONNX_FILE
            with onnx_export_forms():
                model.export(str(raw), format="onnx", verbose=False,
                             input_signature=input_signature(model))
            graph = onnx.load(str(raw))
    except Exception as error:
        raise_if_disk_full(error, path)  # tf2onnx's own OSError names its temporary file
        raise
    finally:
        tf2onnx_logger.setLevel(level)
    repair_graph(graph, output_names(model))
    fusable_graph(graph)
    onnx.checker.check_model(graph)
    with atomic_path(path, expected_bytes=graph.ByteSize()) as temporary:
        onnx.save(graph, str(temporary))
    return path


def repair_graph(graph, names):
    """Makes tf2onnx's graph runnable and its names kbert's, in place.

    `Erfc(x)` becomes `1 - Erf(x)`; the outputs get `names` (in order) and the
    inputs' dynamic axes the names `batch`, `length` (and `choices`).
    """
    import numpy as np
    from onnx import helper
    from onnx import numpy_helper

    nodes = []
    for node in graph.graph.node:
        if node.op_type != "Erfc":
            nodes.append(node)
            continue
        one, erf = f"{node.output[0]}/one", f"{node.output[0]}/erf"
        nodes.append(helper.make_node(
            "Constant", [], [one], value=numpy_helper.from_array(np.array(1.0, np.float32))
        ))
        nodes.append(helper.make_node("Erf", [node.input[0]], [erf]))
        nodes.append(helper.make_node("Sub", [one, erf], [node.output[0]], name=node.name))
    del graph.graph.node[:]
    graph.graph.node.extend(nodes)
    renamed = {}
    for output, name in zip(graph.graph.output, names):
        renamed[output.name] = name
        output.name = name
    for node in graph.graph.node:
        for values in (node.input, node.output):
            for index, value in enumerate(values):
                if value in renamed:
                    values[index] = renamed[value]
    for graph_input in graph.graph.input:
        dims = graph_input.type.tensor_type.shape.dim
        axis_names = _MASK_AXES if graph_input.name == "mask_positions" else _AXIS_NAMES.get(len(dims), ())
        for dim, axis_name in zip(dims, axis_names):
            if not dim.HasField("dim_value"):
                dim.dim_param = axis_name


def fusable_graph(graph):
    """Undoes two rewrites of tf2onnx that hide kbert's forms from ONNX Runtime, in place.

    The layers are exported in `kbert.layers.onnx_export_forms`; tf2onnx then turns a
    mean over the last axis of a rank-3 tensor into `GlobalAveragePool` (which ONNX
    Runtime's layer-norm fusion does not read) and TensorFlow's optimizer turns the
    GELU's division by sqrt(2) into a product with its inverse (which its Gelu fusion
    does not read). Both are put back: `ReduceMean` over the trailing axes, and `Div`.
    """
    import numpy as np
    import onnx
    from onnx import helper
    from onnx import numpy_helper

    inferred = onnx.shape_inference.infer_shapes(graph)
    ranks = {value.name: len(value.type.tensor_type.shape.dim)
             for value in list(inferred.graph.value_info) + list(inferred.graph.input)
             if value.type.tensor_type.HasField("shape")}
    constants = {tensor.name: numpy_helper.to_array(tensor) for tensor in graph.graph.initializer
                 if np.prod(tensor.dims) == 1}  # the scalars: a 1/sqrt(2) is one
    nodes = list(graph.graph.node)
    producers = {output: index for index, node in enumerate(nodes) for output in node.output}
    root_two = f"{_FORMS_PREFIX}sqrt2"
    opset = max((entry.version for entry in graph.opset_import if entry.domain in ("", "ai.onnx")),
                default=0)
    added = {}  # initializers to add
    replaced = {}  # node index: its replacement
    for index, node in enumerate(nodes):
        if node.op_type == "GlobalAveragePool" and ranks.get(node.input[0], 0) >= 3:
            axes = list(range(2, ranks[node.input[0]]))
            if opset < 18:  # `axes` is an attribute until opset 18, an input from then on
                replaced[index] = helper.make_node(
                    "ReduceMean", list(node.input), list(node.output), name=node.name,
                    axes=axes, keepdims=1)
            else:
                axes_name = f"{_FORMS_PREFIX}axes_{len(axes)}"
                if axes_name not in added:
                    added[axes_name] = np.array(axes, np.int64)
                replaced[index] = helper.make_node(
                    "ReduceMean", [node.input[0], axes_name], list(node.output),
                    name=node.name, keepdims=1)
        elif node.op_type == "Erf" and node.input[0] in producers:
            product_index = producers[node.input[0]]
            product = nodes[product_index]
            scale = [position for position, name in enumerate(product.input)
                     if name in constants and constants[name].size == 1
                     and abs(float(constants[name].reshape(())) - 0.5 ** 0.5) < 1e-7]
            if product.op_type == "Mul" and len(scale) == 1:
                other = product.input[1 - scale[0]]
                added[root_two] = np.array(2.0 ** 0.5, np.float32)
                replaced[product_index] = helper.make_node(
                    "Div", [other, root_two], list(product.output), name=product.name)
    dropped = {name for index in replaced for name in nodes[index].input}
    nodes = [replaced.get(index, node) for index, node in enumerate(nodes)]
    del graph.graph.node[:]
    graph.graph.node.extend(nodes)
    # The constants only the replaced nodes read (1/sqrt(2)) would be left unused, which
    # ONNX Runtime reports in a warning whenever it loads the graph.
    used = {name for node in nodes for name in node.input} | {output.name for output in graph.graph.output}
    unused = [index for index, tensor in enumerate(graph.graph.initializer)
              if tensor.name in dropped and tensor.name not in used]
    for index in reversed(unused):  # in place: the weights are not copied
        del graph.graph.initializer[index]
    graph.graph.initializer.extend(
        numpy_helper.from_array(value, name) for name, value in added.items())
    return graph
