"""ONNX graphs of kbert models, for ONNX Runtime: written from the model's weights.

The graph is the model's forward pass in inference: a task model gives what it
computes (a masked-LM its logits at `mask_positions`, a classifier its logits, a
question answerer `start_logits` and `end_logits`, a backbone `sequence_output` and
`pooled_output`). Its inputs are named as the model's (`token_ids`, `segment_ids`,
`padding_mask`, and `mask_positions` for a masked-LM), int32, with dynamic batch and
length axes (`batch`, `length`; `choices` for multiple choice, `masks` for the mask
positions); a single output is named `logits`.

`kbert.inference.onnx_bert_graph` writes the nodes from the model's config and weight
layout, in the forms ONNX Runtime's optimizer fuses (LayerNormalization, BiasGelu, one
MatMul per dense layer, batched attention); `kbert.inference.onnx_graph_builder`
streams the weights into the file one at a time. Neither TensorFlow nor a converter
is involved: the export runs in this process on every backend, with the `onnx`
package only, and takes about as long as writing the weights.
"""

import errno
import pathlib

from kbert.files.atomic_write import atomic_path
from kbert.inference.onnx_bert_graph import SINGLE_OUTPUT
from kbert.inference.onnx_bert_graph import bert_graph
from kbert.inference.onnx_bert_graph import output_names
from kbert.optional_packages import require_extra

# The ONNX file of an exported folder or cache entry.
ONNX_FILE = "model.onnx"
# What a full disk raises (`OSError.errno`).
DISK_FULL_ERRNOS = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))

__all__ = ["DISK_FULL_ERRNOS", "ONNX_FILE", "SINGLE_OUTPUT", "export_graph", "output_names"]


def export_graph(model, path, tokenizer=None):
    """Writes the ONNX graph of `model` (a task model or a `BertBackbone`) to `path`.

    Args:
        model: a kbert Keras model, float32 (the precision ONNX export supports).
        path: the `.onnx` file to write; written to a temporary file beside it, then
            renamed (a full disk is one `OSError` naming `path`).
        tokenizer: unused: the graph takes token ids. Accepted for the callers that
            export a model with its tokenizer.

    Returns:
        `path` as a `pathlib.Path`.

    Raises:
        ValueError: for a model whose precision is not float32, or a model class or
            setting the graph cannot express.
        ModuleNotFoundError: when onnx is missing, naming the extra.
    """
    del tokenizer
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
    graph = bert_graph(model)
    expected = graph.expected_bytes(graph.graph_bytes())
    with atomic_path(path, expected_bytes=expected) as temporary:
        with open(temporary, "wb") as file:
            graph.write(file)
    return path
