"""Activation lookup shared by the encoder and the masked-LM head."""

import keras


def _gelu_exact(x):
    return keras.activations.gelu(x, approximate=False)


def _gelu_approximate(x):
    return keras.activations.gelu(x, approximate=True)


# keras.activations.gelu defaults to the tanh approximation; BERT's "gelu" is the erf form.
_ACTIVATIONS = {
    "gelu": _gelu_exact,
    "gelu_approximate": _gelu_approximate,
    "relu": keras.activations.relu,
    "silu": keras.activations.silu,
    "tanh": keras.activations.tanh,
}


def get_activation(name):
    """The activation function called `name` (see `kbert.architecture.bert_config.ACTIVATIONS`)."""
    if name not in _ACTIVATIONS:
        raise ValueError(
            f"`activation` must be one of {sorted(_ACTIVATIONS)}. Received: activation={name!r}"
        )
    return _ACTIVATIONS[name]
