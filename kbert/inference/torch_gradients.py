"""`probability_gradients` on PyTorch: `torch.autograd.grad` of an eager forward pass."""

import keras
import numpy as np

from kbert.inference.probability_gradients import weighted_probabilities


def probability_gradients(view, inputs, weights):
    """See `kbert.inference.probability_gradients.probability_gradients`."""
    import torch

    tensors = {key: keras.ops.convert_to_tensor(value) for key, value in inputs.items()}
    vectors = tensors["token_vectors"].detach().requires_grad_(True)
    tensors["token_vectors"] = vectors
    with torch.enable_grad():
        values = weighted_probabilities(view(tensors), keras.ops.convert_to_tensor(weights))
        (gradients,) = torch.autograd.grad(values.sum(), vectors)
    return (
        values.detach().cpu().numpy().astype(np.float32),
        gradients.detach().cpu().numpy().astype(np.float32),
    )
