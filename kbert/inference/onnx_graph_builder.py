"""An ONNX graph written node by node, its weights streamed into the file one at a time.

`OnnxGraphBuilder` holds the nodes, the graph's inputs and outputs, small constants and
the names of the weights; the weights themselves stay where they are (a Keras model's
variables) until `write` reads them one by one. ONNX files are protobuf messages, and a
protobuf message that repeats an embedded message field is read as their merge: the
file is the model without weights, then one `graph { initializer { ... } }` record per
weight, whose tensor bytes are written straight from the weight's array. Writing holds
one weight in memory at a time, not a second copy of the whole model.

The helpers emit what ONNX Runtime's optimizer fuses (`benchmarks/NOTES.md`, section 8):
`LayerNormalization` (opset 17), one `MatMul` then `Add` per dense layer, the exact GELU
as `x * 0.5 * (1 + erf(x / sqrt(2)))`, which becomes `BiasGelu` with the dense layer's
bias before it.
"""

import math

import numpy as np

# Opset 17: the first with `LayerNormalization`; IR version 8 is the first that takes it.
OPSET = 17
IR_VERSION = 8
# Protobuf refuses messages from 2 GiB on: ONNX Runtime would not load a larger graph.
MAX_GRAPH_BYTES = 2**31 - 1
# float32's most negative value, as the Keras layers mask attention with.
FLOAT32_MIN = float(np.finfo(np.float32).min)
# Protobuf's "length-delimited" wire type, and the field numbers the weights are written
# under: ModelProto.graph, GraphProto.initializer, TensorProto.raw_data.
_LENGTH_DELIMITED = 2
_GRAPH_FIELD, _INITIALIZER_FIELD, _RAW_DATA_FIELD = 7, 5, 9


class OnnxGraphBuilder:
    """Nodes, inputs, outputs and weights of one ONNX graph, and its streaming writer.

    Args:
        read_weight: called with a weight's name, returns its float32 array (the
            Keras variable's value); called once per weight, in `write`.
        name: the graph's name.

    Example:

    >>> graph = OnnxGraphBuilder(lambda name: weights[name], "tiny")
    >>> x = graph.input("x", ("batch", 4))
    >>> graph.output(graph.dense(x, "dense", 4, 2), "y", ("batch", 2))
    >>> graph.write(file)
    """

    def __init__(self, read_weight, name):
        self.read_weight = read_weight
        self.name = name
        self.nodes = []
        self.inputs = []
        self.outputs = []
        self.constants = {}  # name -> small array, written with the nodes
        self.weights = {}  # name -> shape, read and written one by one
        self._count = 0

    # --- Graph parts -----------------------------------------------------------------

    def input(self, name, dims, dtype=np.int32):
        """A graph input: `dims` are ints (fixed) or strings (dynamic axes' names)."""
        from onnx import helper

        self.inputs.append(helper.make_tensor_value_info(name, _onnx_type(dtype), list(dims)))
        return name

    def output(self, value, name, dims):
        """Names `value` the graph output `name`, float32, of `dims` (None: unknown)."""
        from onnx import TensorProto
        from onnx import helper

        self.node("Identity", [value], name, outputs=[name])
        self.outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(dims)))
        return name

    def weight(self, name, shape):
        """The weight `name` (read by `read_weight` when written), of `shape`."""
        self.weights.setdefault(name, tuple(int(size) for size in shape))
        return name

    def constant(self, value, dtype=np.float32):
        """A small constant array, one initializer per distinct value."""
        value = np.asarray(value, dtype=dtype)
        name = f"constant/{value.dtype}/{'x'.join(map(str, value.shape))}/" + "_".join(
            repr(item) for item in value.reshape(-1).tolist())
        self.constants.setdefault(name, value)
        return name

    def node(self, op_type, inputs, name, outputs=None, **attributes):
        """Adds an `op_type` node; returns its output's name (or the list of them)."""
        from onnx import helper

        self._count += 1
        node_name = f"{name}/{op_type}_{self._count}"
        if outputs is None:
            outputs = [f"{node_name}:0"]
        self.nodes.append(helper.make_node(op_type, list(inputs), list(outputs), name=node_name,
                                           **attributes))
        return outputs[0] if len(outputs) == 1 else outputs

    # --- The forms ONNX Runtime fuses ------------------------------------------------

    def dense(self, x, layer, units_in, units_out, activation=None):
        """`activation(x @ kernel + bias)` of the Dense weights `layer/kernel`, `layer/bias`."""
        kernel = self.weight(f"{layer}/kernel", (units_in, units_out))
        bias = self.weight(f"{layer}/bias", (units_out,))
        y = self.node("Add", [self.node("MatMul", [x, kernel], layer), bias], layer)
        return y if activation is None else self.activation(y, activation, layer)

    def layer_norm(self, x, layer, size, epsilon):
        """LayerNormalization over the last axis with `layer/gamma` and `layer/beta`."""
        gamma = self.weight(f"{layer}/gamma", (size,))
        beta = self.weight(f"{layer}/beta", (size,))
        return self.node("LayerNormalization", [x, gamma, beta], layer, axis=-1,
                         epsilon=float(epsilon))

    def activation(self, x, activation, name):
        """`activation` (a name of `kbert.architecture.bert_config.ACTIVATIONS`) of `x`.

        Raises:
            ValueError: for an activation the graph cannot express.
        """
        if activation == "gelu":  # exact: x * 0.5 * (1 + erf(x / sqrt(2)))
            erf = self.node("Erf", [self.node("Div", [x, self.constant(math.sqrt(2.0))], name)],
                            name)
            product = self.node("Mul", [x, self.node("Add", [erf, self.constant(1.0)], name)],
                                name)
            return self.node("Mul", [product, self.constant(0.5)], name)
        if activation == "gelu_approximate":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
            cube = self.node("Mul", [self.node("Mul", [x, x], name), x], name)
            inner = self.node("Add", [x, self.node("Mul", [cube, self.constant(0.044715)], name)],
                              name)
            scaled = self.node("Mul", [inner, self.constant(math.sqrt(2.0 / math.pi))], name)
            tanh = self.node("Add", [self.node("Tanh", [scaled], name), self.constant(1.0)], name)
            return self.node("Mul", [self.node("Mul", [x, self.constant(0.5)], name), tanh], name)
        if activation == "relu":
            return self.node("Relu", [x], name)
        if activation == "silu":
            return self.node("Mul", [x, self.node("Sigmoid", [x], name)], name)
        if activation == "tanh":
            return self.node("Tanh", [x], name)
        raise ValueError(
            f"The ONNX export cannot write the activation {activation!r}: it writes "
            f"'gelu', 'gelu_approximate', 'relu', 'silu' and 'tanh'"
        )

    # --- The file ----------------------------------------------------------------------

    def graph_bytes(self):
        """The serialized model without its weights (nodes, inputs, outputs, constants)."""
        from onnx import helper
        from onnx import numpy_helper

        graph = helper.make_graph(
            self.nodes, self.name, self.inputs, self.outputs,
            initializer=[numpy_helper.from_array(value, name)
                         for name, value in self.constants.items()])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="kbert", ir_version=IR_VERSION)
        return model.SerializeToString()

    def expected_bytes(self, graph_bytes):
        """About the size of the file `write` writes (the weights and the rest)."""
        weights = sum(4 * math.prod(shape) + 64 + len(name) for name, shape in self.weights.items())
        return len(graph_bytes) + weights

    def write(self, file):
        """Writes the model to the binary `file`: the graph, then each weight as read.

        Raises:
            ValueError: when the graph would reach 2 GiB, which protobuf cannot read,
                or a weight read has another shape than declared.
        """
        graph_bytes = self.graph_bytes()
        size = self.expected_bytes(graph_bytes)
        if size > MAX_GRAPH_BYTES:
            raise ValueError(
                f"The ONNX graph would take {size} bytes; a graph holds its weights and "
                f"ONNX Runtime reads at most {MAX_GRAPH_BYTES} bytes (2 GiB) of it")
        file.write(graph_bytes)
        for name, shape in self.weights.items():
            array = np.ascontiguousarray(self.read_weight(name), dtype="<f4")
            if array.shape != shape:
                raise ValueError(f"The weight {name!r} has the shape {array.shape}, where the "
                                 f"graph was written for {shape}")
            _write_weight(file, name, array)
            del array  # one weight at a time


def _write_weight(file, name, array):
    """`graph { initializer { <tensor> } }`, the tensor's raw data from `array` unmoved."""
    from onnx import TensorProto

    header = TensorProto(name=name, dims=array.shape, data_type=TensorProto.FLOAT)
    header = header.SerializeToString()
    raw_data = _tag(_RAW_DATA_FIELD) + _varint(array.nbytes)
    tensor_size = len(header) + len(raw_data) + array.nbytes
    initializer = _tag(_INITIALIZER_FIELD) + _varint(tensor_size)
    file.write(_tag(_GRAPH_FIELD) + _varint(len(initializer) + tensor_size))
    file.write(initializer + header + raw_data)
    file.write(memoryview(array).cast("B"))


def _tag(field):
    return _varint(field << 3 | _LENGTH_DELIMITED)


def _varint(value):
    """`value` as a protobuf varint: 7 bits a byte, lowest first, the high bit "more"."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _onnx_type(dtype):
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
