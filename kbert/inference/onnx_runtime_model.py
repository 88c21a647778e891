"""A kbert model's forward pass run by ONNX Runtime, in the shape the inference calls use."""

import pathlib
import tempfile

import numpy as np

from kbert.inference.onnx_graph_checks import check_outputs
from kbert.inference.onnx_graph_checks import check_session
from kbert.inference.onnx_graph_checks import graph_size_limit
from kbert.inference.onnx_graph_checks import read_graph
from kbert.inference.onnx_graph_checks import remedy

# ONNX Runtime's own messages stop at the first line: later ones are its C++ source lines.
_REASON_CHARACTERS = 300


class OnnxRuntimeModel:
    """Runs the ONNX graph of a Keras model where `kbert.inference` runs the model.

    It answers what the inference functions ask of a model (`predict_on_batch`,
    `bert_config`, `tokenizer`, `label_names`, `freshly_initialized_heads`) with the
    Keras model's own attributes, and computes the outputs with an ONNX Runtime
    session over the graph that `kbert.inference.onnx_export` wrote from that model.
    The outputs have the Keras model's structure: one array, or a dict by name.

    The graph must be the model's: its inputs and outputs are checked against the
    model's when the session is made, and every batch's outputs before they are
    returned (a batch and shape as the model gives, finite values). ONNX Runtime's
    failures, and graphs or outputs that are not the model's, are one `ValueError`
    naming the graph and the remedy. External data (weights in other files) is
    never read: a graph holds its weights.

    Args:
        model: the Keras model the graph was exported from.
        graph_path: its `.onnx` file (named in errors; read when `graph_bytes` is None,
            through the bounded reader, at most `graph_size_limit(model)` bytes).
        threads: ONNX Runtime's intra-op threads; None lets it choose (the cores).
        graph_bytes: the graph itself, already read and checked (the engine's cache).

    Example:

    >>> runner = OnnxRuntimeModel(classifier, "model.onnx")
    >>> runner.predict_on_batch(inputs).shape
    (8, 2)
    """

    # ONNX Runtime runs any batch and length without compiling: batches are padded to
    # their own longest row, not to a length bucket (`kbert.inference.model_io`).
    compiles_per_shape = False

    def __init__(self, model, graph_path, threads=None, graph_bytes=None):
        self.model = model
        self.graph_path = str(graph_path)
        if graph_bytes is None:
            graph_bytes = read_graph(graph_path, graph_size_limit(model),
                                     pathlib.Path(graph_path).parent)
        self.session = self._session(graph_bytes, threads)
        self.input_names = [graph_input.name for graph_input in self.session.get_inputs()]
        self.output_names = [output.name for output in self.session.get_outputs()]
        self._dict_outputs = isinstance(getattr(model, "output", None), dict)
        self._expected_shapes = check_session(self.session, model, self.graph_path)

    def _session(self, graph_bytes, threads):
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Its errors become this class's ValueError; its log would repeat them on stderr.
        options.log_severity_level = 4
        if threads is not None:
            options.intra_op_num_threads = int(threads)
        with tempfile.TemporaryDirectory(prefix="kbert-onnx-") as empty:
            # A graph loaded from bytes would look for external data in the working
            # folder: an empty folder instead, so that such a graph fails to load.
            options.add_session_config_entry(
                "session.model_external_initializers_file_folder_path", empty)
            try:
                return onnxruntime.InferenceSession(
                    graph_bytes, sess_options=options, providers=["CPUExecutionProvider"]
                )
            except _onnx_runtime_errors() as error:
                raise ValueError(
                    f"ONNX Runtime cannot load the graph {self.graph_path!r}: "
                    f"{_reason(error)}; {remedy(self.graph_path)}"
                ) from None

    @property
    def bert_config(self):
        return self.model.bert_config

    @property
    def tokenizer(self):
        return getattr(self.model, "tokenizer", None)

    @property
    def label_names(self):
        return getattr(self.model, "label_names", None)

    @property
    def freshly_initialized_heads(self):
        return getattr(self.model, "freshly_initialized_heads", ())

    def predict_on_batch(self, inputs):
        """The graph's outputs on a batch of host arrays, as the Keras model's structure.

        Raises:
            ValueError: when ONNX Runtime fails, or the outputs are not the model's (a
                shape the model does not give, NaN or infinite values).
        """
        feed = {name: np.asarray(inputs[name], dtype=np.int32) for name in self.input_names}
        try:
            outputs = self.session.run(self.output_names, feed)
        except _onnx_runtime_errors() as error:
            raise ValueError(
                f"ONNX Runtime failed running the graph {self.graph_path!r}: "
                f"{_reason(error)}; {remedy(self.graph_path)}"
            ) from None
        check_outputs(dict(zip(self.output_names, outputs)), self._expected_shapes, feed,
                      self.graph_path)
        if self._dict_outputs:
            return dict(zip(self.output_names, outputs))
        return outputs[0]

    def __repr__(self):
        return f"<OnnxRuntimeModel of {type(self.model).__name__} from {self.graph_path!r}>"


def _onnx_runtime_errors():
    """The exceptions ONNX Runtime raises (its own classes, and what its bindings raise)."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    own = tuple(value for value in vars(state).values()
                if isinstance(value, type) and issubclass(value, Exception))
    return own + (RuntimeError, MemoryError)


def _reason(error):
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    reason = lines[0] if lines else type(error).__name__
    if len(reason) > _REASON_CHARACTERS:
        reason = reason[:_REASON_CHARACTERS] + "..."
    return reason
