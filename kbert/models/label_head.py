"""The head of a classifier or tagger: dropout, then one logit per label."""

import keras

from kbert.argument_checks import check_positive_int
from kbert.models.float32_outputs import float32_logits
from kbert.models.head_dense import head_dense


class LabelHead:
    """Dropout then a dense layer with one logit per label, as BERT's heads; the layers
    compute in the backbone's dtype policy, the logits come out float32.

    Builds the two Keras layers `<name>_dropout` and `<name>_head` (the names the
    checkpoint formats map); calling it applies them. Not a layer itself, so the
    weights keep their place in the task model.

    Args:
        backbone: the `BertBackbone` (its config gives the initializer range and
            the default dropout, `hidden_dropout`, as in BERT).
        num_classes: number of labels. May be omitted when `label_names` is given.
        label_names: optional list of label strings, index = class id.
        dropout: dropout before the dense layer; default the backbone's.
        name: the prefix of the layer names ("classifier", "token_classifier").

    Raises:
        ValueError: for labels that do not make a head (see `resolve_labels`).
    """

    def __init__(self, backbone, num_classes, label_names, dropout, name):
        self.num_classes, self.label_names = resolve_labels(num_classes, label_names)
        self.dropout = backbone.bert_config.hidden_dropout if dropout is None else dropout
        self.dropout_layer = keras.layers.Dropout(
            self.dropout, dtype=backbone.dtype_policy, name=f"{name}_dropout"
        )
        self.dense = head_dense(backbone, self.num_classes, name=f"{name}_head")

    def config(self):
        """`(num_classes, label_names, dropout)` as resolved."""
        return self.num_classes, self.label_names, self.dropout

    def __call__(self, features):
        return float32_logits(self.dense(self.dropout_layer(features)))


# The most classes a head may have: far beyond any classification or tagging task, it
# refuses a preset asking for a 10^9-wide head before the head is built.
MAX_CLASSES = 100_000


def resolve_labels(num_classes, label_names):
    """Checks `num_classes` against `label_names`; returns both (names may be None)."""
    if label_names is not None:
        label_names = [str(name) for name in label_names]
        if len(set(label_names)) != len(label_names):
            raise ValueError(
                f"`label_names` must be unique. Received: label_names={label_names}"
            )
        if num_classes is None:
            num_classes = len(label_names)
        elif num_classes != len(label_names):
            raise ValueError(
                "`num_classes` must equal len(label_names). Received: "
                f"num_classes={num_classes}, label_names={label_names}"
            )
    if num_classes is None:
        raise ValueError("`num_classes` (or `label_names`) is required. Received: None")
    return check_positive_int("num_classes", num_classes, MAX_CLASSES), label_names
