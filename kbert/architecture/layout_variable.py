"""One weight of a kbert model, known from the config alone."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class LayoutVariable:
    """A kbert variable: where it is stored, its shape and the table key formats use.

    Attributes:
        path: its name in a kbert preset's `model.weights.h5`, e.g.
            "backbone/transformer_layer_3/output_dense/kernel" or
            "head/classifier_head/bias".
        template: `path` with the encoder block's index written `{layer}`, e.g.
            "backbone/transformer_layer_{layer}/output_dense/kernel": the key under which
            every checkpoint format declares its own name(s) for the variable.
        layer: the encoder block's index, or None outside the encoder blocks.
        shape: its shape, a tuple of ints.
    """

    path: str
    template: str
    layer: int | None
    shape: tuple

