"""The hyperparameters that define a BERT encoder."""

import dataclasses
import math

# Published BERT sizes (Turc et al., 2019 "Well-Read Students Learn Better"; Devlin et al., 2018):
# name -> (num_layers, hidden_size). Heads are hidden_size / 64 and the feed-forward layer is
# 4 * hidden_size wide, as in every published checkpoint.
BERT_SIZES = {
    "tiny": (2, 128),
    "mini": (4, 256),
    "small": (4, 512),
    "medium": (8, 512),
    "base": (12, 768),
    "large": (24, 1024),
}

# Activations the encoder knows. "gelu" is the exact (erf) form BERT was trained with;
# "gelu_approximate" is the tanh form some ports use (Hugging Face calls it "gelu_new").
ACTIVATIONS = ("gelu", "gelu_approximate", "relu", "silu", "tanh")


@dataclasses.dataclass(frozen=True)
class BertConfig:
    """Hyperparameters of a BERT encoder.

    The defaults are BERT-base with the uncased English vocabulary size.

    Args:
        vocabulary_size: number of WordPiece tokens.
        hidden_size: width of every hidden state.
        num_layers: number of encoder blocks.
        num_heads: attention heads per block; must divide `hidden_size`.
        intermediate_size: width of the feed-forward layer inside each block.
        max_positions: number of learned absolute position embeddings, i.e. the
            longest sequence the model accepts.
        type_vocabulary_size: number of segment (token type) ids; 2 for text pairs.
        hidden_dropout: dropout on embeddings and on every residual branch.
        attention_dropout: dropout on the attention probabilities in training, as in
            BERT: cuDNN's own dropout on JAX GPUs, PyTorch's `dropout_p`, elsewhere
            the explicit softmax path (see `kbert.layers.attention_dispatch`).
        layer_norm_epsilon: epsilon of every LayerNorm. BERT uses 1e-12.
        activation: feed-forward activation, one of `ACTIVATIONS`.
        initializer_range: standard deviation of the truncated-normal initialiser.

    Example:

    >>> config = BertConfig.from_size("tiny", vocabulary_size=1000)
    >>> config.num_heads
    2
    """

    vocabulary_size: int = 30522
    hidden_size: int = 768
    num_layers: int = 12
    num_heads: int = 12
    intermediate_size: int = 3072
    max_positions: int = 512
    type_vocabulary_size: int = 2
    hidden_dropout: float = 0.1
    attention_dropout: float = 0.1
    layer_norm_epsilon: float = 1e-12
    activation: str = "gelu"
    initializer_range: float = 0.02

    def __post_init__(self):
        positive_ints = (
            "vocabulary_size",
            "hidden_size",
            "num_layers",
            "num_heads",
            "intermediate_size",
            "max_positions",
            "type_vocabulary_size",
        )
        for name in positive_ints:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"`{name}` must be a positive integer. Received: {name}={value!r}"
                )
        for name in ("hidden_dropout", "attention_dropout"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
                raise ValueError(
                    f"`{name}` must be a float in [0, 1). Received: {name}={value!r}"
                )
        for name in ("layer_norm_epsilon", "initializer_range"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
                raise ValueError(
                    f"`{name}` must be a positive float. Received: {name}={value!r}"
                )
        if self.hidden_size % self.num_heads != 0:
            raise ValueError(
                "`hidden_size` must be divisible by `num_heads`. Received: "
                f"hidden_size={self.hidden_size}, num_heads={self.num_heads}"
            )
        if self.activation not in ACTIVATIONS:
            raise ValueError(
                f"`activation` must be one of {ACTIVATIONS}. "
                f"Received: activation={self.activation!r}"
            )

    @property
    def head_size(self):
        return self.hidden_size // self.num_heads

    @classmethod
    def from_size(cls, size, vocabulary_size=30522, **overrides):
        """The published BERT size `size` ("tiny", "mini", "small", "medium", "base", "large")."""
        if size not in BERT_SIZES:
            raise ValueError(
                f"`size` must be one of {sorted(BERT_SIZES)}. Received: size={size!r}"
            )
        num_layers, hidden_size = BERT_SIZES[size]
        values = dict(
            vocabulary_size=vocabulary_size,
            hidden_size=hidden_size,
            num_layers=num_layers,
            num_heads=hidden_size // 64,
            intermediate_size=4 * hidden_size,
        )
        values.update(overrides)
        return cls(**values)

    def to_dict(self):
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values):
        """Builds a config from `to_dict()` output; unknown keys are an error."""
        if not isinstance(values, dict):
            raise ValueError(
                f"A BERT config must be a dict. Received: {type(values).__name__}"
            )
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(
                f"Unknown BERT config fields {unknown}. Known fields: {sorted(known)}"
            )
        return cls(**values)

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)
