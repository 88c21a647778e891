"""The task models' logits in float32, whatever dtype policy their layers compute in."""

from keras import ops


def float32_logits(logits):
    """`logits` as float32: the heads compute in the backbone's dtype policy (as keras-hub's
    do), and the outputs stay float32 so that losses and softmax keep their precision
    (Keras' mixed-precision guide). A no-op, and no node in the graph, under float32."""
    if logits.dtype == "float32":
        return logits
    return ops.cast(logits, "float32")
