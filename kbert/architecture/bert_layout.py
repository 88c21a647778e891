"""The BERT weight layout: every kbert variable with its shape, from the config alone.

This is the one walk of the layout. The model classes create these variables (a test
checks every class against this list), the preset reader checks a file's shapes against
it before reading any data, and each checkpoint format (`kbert.checkpoints`) declares its
own names for these paths in one table that import and export both read.

Paths are those of a kbert preset's `model.weights.h5`: the backbone's variables under
`backbone/`, a task's head under `head/`. Shapes are written with these letters:

    V vocabulary_size   H hidden_size   I intermediate_size   P max_positions
    T type_vocabulary_size   3H fused query/key/value   C the head's classes   2 two

Query, key and value are one (H, 3H) projection, concatenated in that order; every
Dense kernel is (in, out).
"""

import numpy as np

from kbert.architecture.layout_variable import LayoutVariable
from kbert.model_table import model_class

BACKBONE_PREFIX = "backbone/"
HEAD_PREFIX = "head/"
LAYER = "transformer_layer_{layer}"
# The template of an encoder block's variables, `{layer}` its index.
BLOCK = BACKBONE_PREFIX + LAYER

_EMBEDDINGS = (
    ("embeddings/token_embedding/embeddings", ("V", "H")),
    ("embeddings/position_embeddings", ("P", "H")),
    ("embeddings/segment_embedding/embeddings", ("T", "H")),
    ("embeddings/layer_norm/gamma", ("H",)),
    ("embeddings/layer_norm/beta", ("H",)),
)
_ENCODER_BLOCK = (
    (f"{LAYER}/self_attention/query_key_value/kernel", ("H", "3H")),
    (f"{LAYER}/self_attention/query_key_value/bias", ("3H",)),
    (f"{LAYER}/self_attention/output_projection/kernel", ("H", "H")),
    (f"{LAYER}/self_attention/output_projection/bias", ("H",)),
    (f"{LAYER}/attention_layer_norm/gamma", ("H",)),
    (f"{LAYER}/attention_layer_norm/beta", ("H",)),
    (f"{LAYER}/intermediate_dense/kernel", ("H", "I")),
    (f"{LAYER}/intermediate_dense/bias", ("I",)),
    (f"{LAYER}/output_dense/kernel", ("I", "H")),
    (f"{LAYER}/output_dense/bias", ("H",)),
    (f"{LAYER}/output_layer_norm/gamma", ("H",)),
    (f"{LAYER}/output_layer_norm/beta", ("H",)),
)
_POOLER = (
    ("pooler/dense/kernel", ("H", "H")),
    ("pooler/dense/bias", ("H",)),
)
# Each model class's head layers and their variables are its row of the model table
# (`kbert.model_table.ModelClass.head_layers`).


def _size(letter, config, num_classes):
    sizes = {  # one per letter of `kbert.model_table.SHAPE_LETTERS`
        "V": config.vocabulary_size,
        "H": config.hidden_size,
        "3H": 3 * config.hidden_size,
        "I": config.intermediate_size,
        "P": config.max_positions,
        "T": config.type_vocabulary_size,
        "C": num_classes,
        "2": 2,
        "1": 1,
    }
    return sizes[letter]


def _variables(prefix, entries, config, num_classes=None, layer=None):
    return [
        LayoutVariable(
            path=prefix + template.format(layer=layer),
            template=prefix + template,
            layer=layer,
            shape=tuple(_size(letter, config, num_classes) for letter in shape),
        )
        for template, shape in entries
    ]


def backbone_variables(config):
    """Every variable of a `BertBackbone` with `config` (a `BertConfig`), in model order."""
    variables = _variables(BACKBONE_PREFIX, _EMBEDDINGS, config)
    for index in range(config.num_layers):
        variables += _variables(BACKBONE_PREFIX, _ENCODER_BLOCK, config, layer=index)
    return variables + _variables(BACKBONE_PREFIX, _POOLER, config)


def head_variables(config, class_name, num_classes=None):
    """Every head variable of the kbert model class `class_name` (none for "BertBackbone").

    The head's layers and their variables are the class's row of the model table
    (`kbert.model_table.ModelClass.head_layers`).

    Args:
        config: the backbone's `BertConfig`.
        class_name: a class of `kbert.model_table.MODEL_CLASSES`.
        num_classes: the classes of a head with one output per class (a
            `BertClassifier` or `BertTokenClassifier`).

    Raises:
        ValueError: for an unknown class, or a class head without `num_classes`.
    """
    row = model_class(class_name)
    if row.has_class_head and (
        isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1
    ):
        raise ValueError(
            f"A {class_name} head needs a positive `num_classes`. "
            f"Received: num_classes={num_classes!r}"
        )
    variables = []
    for layer_name, entries in row.head_layers:
        templates = tuple((f"{layer_name}/{name}", shape) for name, shape in entries)
        variables += _variables(HEAD_PREFIX, templates, config, num_classes)
    return variables

def model_variables(config, class_name="BertBackbone", num_classes=None):
    """`backbone_variables` then `head_variables`: every weight of the model."""
    return backbone_variables(config) + head_variables(config, class_name, num_classes)


def head_layer_of(variable):
    """The head layer a head variable belongs to ("masked_lm_head", ...), else None."""
    if not variable.path.startswith(HEAD_PREFIX):
        return None
    return variable.path[len(HEAD_PREFIX) :].split("/")[0]


def truncated_normal(shape, stddev, generator):
    """BERT's initial weights: normal(0, stddev), values beyond two deviations redrawn.

    Args:
        shape: the array's shape.
        stddev: the standard deviation before truncation (`initializer_range`).
        generator: a `numpy.random.Generator`.

    Returns:
        A float32 array.
    """
    values = generator.standard_normal(shape, dtype=np.float32)
    outside = np.abs(values) > 2.0
    while outside.any():
        values[outside] = generator.standard_normal(int(outside.sum()), dtype=np.float32)
        outside = np.abs(values) > 2.0
    values *= np.float32(stddev)
    return values


def initial_value(variable, config, generator):
    """The value a freshly built model gives `variable`, drawn with `generator`.

    LayerNorm scales start at one, biases and LayerNorm offsets at zero, every other
    weight (kernels, embeddings) from `truncated_normal` with `initializer_range`.
    """
    name = variable.path.rsplit("/", 1)[-1]
    if name == "gamma":
        return np.ones(variable.shape, np.float32)
    if name in ("bias", "beta", "output_bias"):
        return np.zeros(variable.shape, np.float32)
    return truncated_normal(variable.shape, config.initializer_range, generator)
