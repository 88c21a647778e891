"""The ONNX graph of a kbert model, written from its weights: BERT's forward pass, once.

Shape legend: B = batch, C = choices, L = length, P = mask positions, H = hidden size,
N = heads, D = head size (H / N), V = vocabulary, K = the head's classes.

The walk reads what `kbert.layers` computes in inference (no dropout) and writes it with
`OnnxGraphBuilder`'s forms: embeddings (three lookups, LayerNormalization), each encoder
block (the fused query/key/value projection, batched attention with the padding mask
as an additive (B, 1, 1, L) term, the output projection, the residual and its
LayerNormalization, the feed-forward layer), the pooler, then the model class's head.
The weights are named by their paths in the weight layout
(`kbert.architecture.bert_layout`): the model's variables are found by those paths,
checked against the layout's shapes, and read one by one while the file is written.

The graph's inputs are the model's (int32, dynamic axes named `_AXIS_NAMES`, and
`_MASK_AXES` for `mask_positions`); its outputs are the model's: a dict model's by key,
sorted (`output_names`), a single output as `SINGLE_OUTPUT`.
"""

import keras

from kbert.architecture import bert_layout
from kbert.inference.onnx_graph_builder import FLOAT32_MIN
from kbert.inference.onnx_graph_builder import OnnxGraphBuilder
from kbert.model_table import MODEL_CLASSES

# The name of a model's single output in the graph.
SINGLE_OUTPUT = "logits"
# Names of the dynamic axes of the inputs, by rank; `mask_positions` has its own.
_AXIS_NAMES = {2: ("batch", "length"), 3: ("batch", "choices", "length")}
_MASK_AXES = ("batch", "masks")
_BACKBONE_INPUTS = ("token_ids", "segment_ids", "padding_mask")
_BLOCK = bert_layout.BLOCK


def output_names(model):
    """The graph's output names, in its order: a dict model's keys, sorted, else `logits`."""
    if isinstance(model.output, dict):
        return sorted(model.output)
    return [SINGLE_OUTPUT]


def bert_graph(model):
    """The `OnnxGraphBuilder` of `model` (a kbert task model or `BertBackbone`, float32).

    Raises:
        ValueError: for a model class or a setting the graph cannot express.
    """
    class_name = _model_class(model)
    config = model.bert_config
    variables = _variables_by_path(model, class_name)
    graph = OnnxGraphBuilder(lambda path: keras.ops.convert_to_numpy(variables[path]),
                             class_name)
    for path, variable in variables.items():
        graph.weight(path, variable.shape)
    inputs = {name: graph.input(name, _axes(name, len(tensor.shape)))
              for name, tensor in model.input.items()}
    rows = inputs
    if len(model.input["token_ids"].shape) == 3:  # (B, C, L): the encoder runs on B * C rows
        rows = {name: _flatten_choices(graph, inputs[name]) for name in _BACKBONE_INPUTS}
    encoded = _encoder(graph, config, rows)
    outputs = _HEADS[class_name](graph, model, encoded, inputs)
    if not isinstance(model.output, dict):
        outputs = {SINGLE_OUTPUT: outputs}
    for name in output_names(model):
        symbolic = model.output[name] if isinstance(model.output, dict) else model.output
        graph.output(outputs[name], name, ("batch",) + tuple(symbolic.shape[1:]))
    return graph


def _model_class(model):
    """The model-table class `model` is or derives from, if the graph knows its head."""
    for klass in type(model).__mro__:
        row = MODEL_CLASSES.get(klass.__name__)
        if row is not None and keras.saving.get_registered_name(klass) == row.registered_name:
            if row.name not in _HEADS:
                break
            return row.name
    raise ValueError(
        f"The ONNX export writes the heads of {sorted(_HEADS)}. Received: a "
        f"{type(model).__name__}")


def _variables_by_path(model, class_name):
    """The model's variables by weight-layout path, checked against the layout."""
    backbone = getattr(model, "backbone", model)
    backbone_ids = {id(variable) for variable in backbone.weights}
    found = {bert_layout.BACKBONE_PREFIX + variable.path: variable
             for variable in backbone.weights}
    found.update({bert_layout.HEAD_PREFIX + variable.path: variable
                  for variable in model.weights if id(variable) not in backbone_ids})
    layout = bert_layout.model_variables(model.bert_config, class_name,
                                         getattr(model, "num_classes", None))
    variables = {}
    for expected in layout:
        variable = found.get(expected.path)
        if variable is None or tuple(variable.shape) != expected.shape:
            shape = None if variable is None else tuple(variable.shape)
            raise ValueError(
                f"The ONNX export needs the weight {expected.path!r} of shape "
                f"{expected.shape}. Received: {'no such weight' if shape is None else shape}")
        variables[expected.path] = variable
    return variables


def _axes(name, rank):
    return _MASK_AXES if name == "mask_positions" else _AXIS_NAMES[rank]


def _flatten_choices(graph, value):
    """(B, C, L) -> (B * C, L), example `b`, choice `c` as row `b * C + c`."""
    length = graph.node("Shape", [value], "choice_rows", start=2)
    shape = graph.node("Concat", [graph.constant([-1], "int64"), length], "choice_rows", axis=0)
    return graph.node("Reshape", [value, shape], "choice_rows")


def _encoder(graph, config, inputs):
    """`sequence_output` (B, L, H) and `pooled_output` (B, H) of the backbone's inputs."""
    hidden = config.hidden_size
    prefix = bert_layout.BACKBONE_PREFIX + "embeddings"
    shapes = {variable.path: variable.shape for variable in bert_layout.backbone_variables(config)}
    tables = {name: graph.weight(f"{prefix}/{name}", shapes[f"{prefix}/{name}"])
              for name in ("token_embedding/embeddings", "segment_embedding/embeddings",
                           "position_embeddings")}
    tokens = graph.node("Gather", [tables["token_embedding/embeddings"], inputs["token_ids"]],
                        prefix)  # (B, L, H)
    segments = graph.node("Gather", [tables["segment_embedding/embeddings"],
                                     inputs["segment_ids"]], prefix)
    length = graph.node("Shape", [inputs["token_ids"]], prefix, start=1, end=2)
    positions = graph.node("Slice", [tables["position_embeddings"], graph.constant([0], "int64"),
                                     length, graph.constant([0], "int64")], prefix)  # (L, H)
    x = graph.node("Add", [graph.node("Add", [tokens, segments], prefix), positions], prefix)
    x = graph.layer_norm(x, f"{prefix}/layer_norm", hidden, config.layer_norm_epsilon)
    mask_bias = _mask_bias(graph, inputs["padding_mask"])
    for index in range(config.num_layers):
        x = _encoder_block(graph, config, x, mask_bias, _BLOCK.format(layer=index))
    first = graph.node("Gather", [x, graph.constant(0, "int64")], "pooler", axis=1)  # (B, H)
    pooled = graph.dense(first, bert_layout.BACKBONE_PREFIX + "pooler/dense", hidden, hidden,
                         activation="tanh")
    return {"sequence_output": x, "pooled_output": pooled}


def _mask_bias(graph, padding_mask):
    """(B, 1, 1, L): 0 where `padding_mask` is set, float32's minimum elsewhere.

    Added to the scores, it gives the softmax the Keras layers' masked scores (theirs
    replace a masked score by that minimum; a finite score added to it rounds to it).
    """
    name = "attention_mask"
    real = graph.node("Cast", [padding_mask], name, to=9)  # bool
    bias = graph.node("Where", [real, graph.constant(0.0), graph.constant(FLOAT32_MIN)], name)
    return graph.node("Unsqueeze", [bias, graph.constant([1, 2], "int64")], name)


def _encoder_block(graph, config, x, mask_bias, layer):
    """One post-LayerNorm encoder block (`kbert.layers.BertEncoderBlock`), inference."""
    hidden, heads = config.hidden_size, config.num_heads
    epsilon = config.layer_norm_epsilon
    attention = f"{layer}/self_attention"
    qkv = graph.dense(x, f"{attention}/query_key_value", hidden, 3 * hidden)  # (B, L, 3H)
    split = graph.node("Split", [qkv], attention, axis=2,
                       outputs=[f"{attention}/{part}" for part in ("query", "key", "value")])
    head_shape = graph.constant([0, 0, heads, hidden // heads], "int64")
    query, key, value = (graph.node("Reshape", [part, head_shape], attention)  # (B, L, N, D)
                         for part in split)
    query = graph.node("Transpose", [query], attention, perm=[0, 2, 1, 3])  # (B, N, L, D)
    key = graph.node("Transpose", [key], attention, perm=[0, 2, 3, 1])  # (B, N, D, L)
    value = graph.node("Transpose", [value], attention, perm=[0, 2, 1, 3])  # (B, N, L, D)
    scores = graph.node("MatMul", [query, key], attention)  # (B, N, L, L)
    scores = graph.node("Mul", [scores, graph.constant(1.0 / (hidden // heads) ** 0.5)], attention)
    scores = graph.node("Add", [scores, mask_bias], attention)
    weights = graph.node("Softmax", [scores], attention, axis=-1)
    context = graph.node("MatMul", [weights, value], attention)  # (B, N, L, D)
    context = graph.node("Transpose", [context], attention, perm=[0, 2, 1, 3])  # (B, L, N, D)
    context = graph.node("Reshape", [context, graph.constant([0, 0, hidden], "int64")], attention)
    attended = graph.dense(context, f"{attention}/output_projection", hidden, hidden)
    x = graph.layer_norm(graph.node("Add", [x, attended], layer), f"{layer}/attention_layer_norm",
                         hidden, epsilon)
    inner = graph.dense(x, f"{layer}/intermediate_dense", hidden, config.intermediate_size,
                        activation=config.activation)
    inner = graph.dense(inner, f"{layer}/output_dense", config.intermediate_size, hidden)
    return graph.layer_norm(graph.node("Add", [x, inner], layer), f"{layer}/output_layer_norm",
                            hidden, epsilon)


# --- Heads: each class's outputs from the encoder's (and the model's inputs) ---------------


def _head_dense(graph, model, x, layer_name, units):
    """The task's Dense head `layer_name` (no activation) on `x`."""
    layer = model.get_layer(layer_name)
    if getattr(layer.activation, "__name__", None) != "linear" or not layer.use_bias:
        raise ValueError(
            f"The ONNX export writes a head layer {layer_name!r} with a bias and no "
            f"activation. Received: activation={layer.activation!r}, use_bias={layer.use_bias}")
    return graph.dense(x, bert_layout.HEAD_PREFIX + layer_name, model.bert_config.hidden_size,
                       units)


def _masked_lm(graph, model, sequence_output, mask_positions):
    """`MaskedLMHead`: logits (B, P, V) at `mask_positions`, tied to the token embedding."""
    head = model.get_layer("masked_lm_head")
    config = model.bert_config
    hidden, vocabulary = config.hidden_size, config.vocabulary_size
    prefix = bert_layout.HEAD_PREFIX + "masked_lm_head"
    indices = graph.node("Unsqueeze", [graph.node("Cast", [mask_positions], prefix, to=7),
                                       graph.constant([-1], "int64")], prefix)  # (B, P, 1)
    x = graph.node("GatherND", [sequence_output, indices], prefix, batch_dims=1)  # (B, P, H)
    x = graph.dense(x, f"{prefix}/transform_dense", hidden, hidden, activation=head.activation)
    x = graph.layer_norm(x, f"{prefix}/layer_norm", hidden, head.layer_norm_epsilon)
    rows = graph.node("Reshape", [x, graph.constant([-1, hidden], "int64")], prefix)  # (B*P, H)
    embeddings = graph.weight(bert_layout.BACKBONE_PREFIX + "embeddings/token_embedding/embeddings",
                              (vocabulary, hidden))
    bias = graph.weight(f"{prefix}/output_bias", (vocabulary,))
    logits = graph.node("Gemm", [rows, embeddings, bias], prefix, transB=1)  # (B*P, V)
    shape = graph.node("Concat", [graph.node("Shape", [mask_positions], prefix),
                                  graph.constant([vocabulary], "int64")], prefix, axis=0)
    return graph.node("Reshape", [logits, shape], prefix)  # (B, P, V)


def _backbone(graph, model, encoded, inputs):
    return encoded


def _masked_lm_outputs(graph, model, encoded, inputs):
    return _masked_lm(graph, model, encoded["sequence_output"], inputs["mask_positions"])


def _pretrainer(graph, model, encoded, inputs):
    return {
        "mlm_logits": _masked_lm(graph, model, encoded["sequence_output"],
                                 inputs["mask_positions"]),
        "nsp_logits": _head_dense(graph, model, encoded["pooled_output"],
                                  "next_sentence_head", 2),
    }


def _classifier(graph, model, encoded, inputs):
    return _head_dense(graph, model, encoded["pooled_output"], "classifier_head",
                       model.num_classes)


def _token_classifier(graph, model, encoded, inputs):
    return _head_dense(graph, model, encoded["sequence_output"], "token_classifier_head",
                       model.num_classes)


def _question_answerer(graph, model, encoded, inputs):
    spans = _head_dense(graph, model, encoded["sequence_output"], "span_head", 2)  # (B, L, 2)
    return {name: graph.node("Gather", [spans, graph.constant(index, "int64")], "span_head",
                             axis=2)
            for index, name in enumerate(("start_logits", "end_logits"))}


def _multiple_choice(graph, model, encoded, inputs):
    scores = _head_dense(graph, model, encoded["pooled_output"], "choice_head", 1)  # (B*C, 1)
    choices = graph.node("Shape", [inputs["token_ids"]], "choice_scores", start=1, end=2)
    shape = graph.node("Concat", [graph.constant([-1], "int64"), choices], "choice_scores",
                       axis=0)
    return graph.node("Reshape", [scores, shape], "choice_scores")  # (B, C)


# Model-table class -> its outputs (a dict, or the single output).
_HEADS = {
    "BertBackbone": _backbone,
    "BertMaskedLM": _masked_lm_outputs,
    "BertPretrainer": _pretrainer,
    "BertClassifier": _classifier,
    "BertTokenClassifier": _token_classifier,
    "BertQuestionAnswerer": _question_answerer,
    "BertMultipleChoice": _multiple_choice,
}
