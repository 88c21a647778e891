"""A kbert model's forward pass run by ONNX Runtime, in the shape the inference calls use."""

import numpy as np


class OnnxRuntimeModel:
    """Runs the ONNX graph of a Keras model where `kbert.inference` runs the model.

    It answers what the inference functions ask of a model (`predict_on_batch`,
    `bert_config`, `tokenizer`, `label_names`, `freshly_initialized_heads`) with the
    Keras model's own attributes, and computes the outputs with an ONNX Runtime
    session over the graph that `kbert.inference.onnx_export` wrote from that model.
    The outputs have the Keras model's structure: one array, or a dict by name.

    Args:
        model: the Keras model the graph was exported from.
        graph_path: its `.onnx` file.
        threads: ONNX Runtime's intra-op threads; None lets it choose (the cores).

    Example:

    >>> runner = OnnxRuntimeModel(classifier, "model.onnx")
    >>> runner.predict_on_batch(inputs).shape
    (8, 2)
    """

    # ONNX Runtime runs any batch and length without compiling: batches are padded to
    # their own longest row, not to a length bucket (`kbert.inference.model_io`).
    compiles_per_shape = False

    def __init__(self, model, graph_path, threads=None):
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads is not None:
            options.intra_op_num_threads = int(threads)
        self.model = model
        self.graph_path = str(graph_path)
        self.session = onnxruntime.InferenceSession(
            self.graph_path, sess_options=options, providers=["CPUExecutionProvider"]
        )
        self.input_names = [graph_input.name for graph_input in self.session.get_inputs()]
        self.output_names = [output.name for output in self.session.get_outputs()]
        self._dict_outputs = isinstance(getattr(model, "output", None), dict)

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
        """The graph's outputs on a batch of host arrays, as the Keras model's structure."""
        feed = {name: np.asarray(inputs[name], dtype=np.int32) for name in self.input_names}
        outputs = self.session.run(self.output_names, feed)
        if self._dict_outputs:
            return dict(zip(self.output_names, outputs))
        return outputs[0]

    def __repr__(self):
        return f"<OnnxRuntimeModel of {type(self.model).__name__} from {self.graph_path!r}>"
