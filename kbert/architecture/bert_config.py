"""The hyperparameters that define a BERT encoder."""

import dataclasses
import math

from kbert.files.load_budget import check_load_budget

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

# The largest value each size field accepts. Far beyond any published BERT (vocabularies of
# 30k-250k tokens, widths up to 1024, 24 layers, 512 positions), they exist so that a
# hostile or mistyped config.json is refused before a model is built: a million layers, or
# a 10^9-wide layer, would hang or exhaust memory instead. Within them, loaders also check
# that the weights file really holds the parameters the config implies.
SIZE_LIMITS = {
    "vocabulary_size": 1_000_000,
    "hidden_size": 16_384,
    "num_layers": 256,
    "num_heads": 1_024,
    "intermediate_size": 65_536,
    "max_positions": 65_536,
    "type_vocabulary_size": 1_024,
}

# See `BertConfig.check_weights_hold`.
_PARAMETER_SLACK = 1_000_000


@dataclasses.dataclass(frozen=True)
class BertConfig:
    """Hyperparameters of a BERT encoder.

    The defaults are BERT-base with the uncased English vocabulary size.

    Every size must be a positive integer no larger than its entry in `SIZE_LIMITS`
    (vocabulary_size <= 1,000,000, hidden_size <= 16,384, num_layers <= 256,
    num_heads <= 1,024, intermediate_size <= 65,536, max_positions <= 65,536,
    type_vocabulary_size <= 1,024); rates are floats in [0, 1).

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
        for name, limit in SIZE_LIMITS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"`{name}` must be a positive integer. Received: {name}={value!r}"
                )
            if value > limit:
                raise ValueError(
                    f"`{name}` must be at most {limit}. Received: {name}={value!r}"
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

    def parameter_count(self, include_pooler=True):
        """The number of weights of a `BertBackbone` with this config (`count_params()`).

        Known before anything is built, so loaders compare it with what a weights file
        declares: embeddings (V + P + T) * H + 2H (with their LayerNorm), per layer
        4H^2 + 2HI + 9H + I (fused q/k/v, output projection, feed-forward, two
        LayerNorms), pooler H^2 + H.
        """
        hidden, intermediate = self.hidden_size, self.intermediate_size
        embeddings = (
            self.vocabulary_size + self.max_positions + self.type_vocabulary_size
        ) * hidden + 2 * hidden
        layer = 4 * hidden * hidden + 2 * hidden * intermediate + 9 * hidden + intermediate
        pooler = hidden * hidden + hidden if include_pooler else 0
        return embeddings + self.num_layers * layer + pooler

    def check_weights_hold(self, declared_values, source, include_pooler=True):
        """Refuses, before a model is built, a config that its weights cannot fill.

        A config.json naming a vocabulary of a million tokens beside a 150 KB weights
        file would otherwise allocate gigabytes before the first shape check fails.
        The model may exceed what the file declares by at most as much again (or a
        million parameters, for small files): then building it costs no more than the
        weights already read, and the exact per-weight check that follows names the
        difference.

        Args:
            declared_values: how many numbers the weights file declares for the model
                (the product of its tensors' shapes, summed).
            source: the config file, named in the error.
            include_pooler: whether the file must hold the pooler (some task checkpoints
                are saved without it).

        Raises:
            ValueError: when the model would have more parameters than the file
                declares, or more than the load budget (`kbert.files.load_budget`).
        """
        needed = self.parameter_count(include_pooler)
        check_load_budget(source, 4 * needed, f"the {needed} parameters its config describes")
        if needed > 2 * declared_values + _PARAMETER_SLACK:
            raise ValueError(
                f"{source}: the config describes a model of {needed} parameters "
                f"(vocabulary_size={self.vocabulary_size}, hidden_size={self.hidden_size}, "
                f"num_layers={self.num_layers}, intermediate_size={self.intermediate_size}, "
                f"max_positions={self.max_positions}) but the weights file declares only "
                f"{declared_values} values: the config does not describe these weights."
            )

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
