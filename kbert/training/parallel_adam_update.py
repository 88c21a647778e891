"""Adam's update of every variable at once on PyTorch, with `torch._foreach_*` kernels.

Keras updates a custom optimizer one variable at a time: on PyTorch, which runs eagerly,
that is about ten small kernels and as many temporaries per variable, every step (its
own `keras.optimizers.AdamW` is updated in one pass, but only that exact class). For
`BertAdamW` on MiniLM this was the larger half of a training step on a CPU. This module
does what `torch.optim.AdamW(foreach=True)` does, in the same order of operations, on the
optimizer's own Keras variables; the decoupled weight decay stays Keras' (applied
before, in one `_foreach_mul_`).
"""

import keras
import torch


def update_all(optimizer, gradients, variables, learning_rate, epsilon_style):
    """Adam's step for every variable (`epsilon_style` as in `BertAdamW`); False when the
    variables do not share one dtype (the caller then updates them one at a time)."""
    values = [variable.value for variable in variables]
    dtype = values[0].dtype
    if any(value.dtype != dtype for value in values):
        return False
    indices = [optimizer._get_variable_index(variable) for variable in variables]
    momentums = [optimizer._momentums[index].value for index in indices]
    velocities = [optimizer._velocities[index].value for index in indices]
    # Gradients may come as NumPy arrays (`optimizer.apply` takes any array).
    gradients = [keras.ops.convert_to_tensor(gradient).to(dtype) for gradient in gradients]
    # `iterations` counts updates (a tensor where gradients are accumulated).
    step = float(keras.ops.convert_to_numpy(optimizer.iterations)) + 1
    first_correction = 1 - optimizer.beta_1**step
    second_correction = 1 - optimizer.beta_2**step
    rate = float(learning_rate)
    with torch.no_grad():
        torch._foreach_lerp_(momentums, gradients, 1 - optimizer.beta_1)
        torch._foreach_mul_(velocities, optimizer.beta_2)
        torch._foreach_addcmul_(velocities, gradients, gradients, 1 - optimizer.beta_2)
        denominators = torch._foreach_sqrt(velocities)
        if epsilon_style == "torch":
            # torch.optim.AdamW: epsilon added to the bias-corrected sqrt(v_hat).
            torch._foreach_div_(denominators, second_correction**0.5)
            torch._foreach_add_(denominators, optimizer.epsilon)
            torch._foreach_addcdiv_(values, momentums, denominators, -rate / first_correction)
        else:
            # Keras: epsilon added to sqrt(v), the corrections folded into the step size.
            torch._foreach_add_(denominators, optimizer.epsilon)
            step_size = rate * second_correction**0.5 / first_correction
            torch._foreach_addcdiv_(values, momentums, denominators, -step_size)
    return True


def clip_by_global_norm(gradients, clip_norm):
    """Keras' `clip_by_global_norm` with one `_foreach_norm` pass: each gradient times
    `clip_norm / max(global norm, clip_norm)`; NaN everywhere when the norm is not finite
    (as Keras). The gradients given are left as they were."""
    gradients = [keras.ops.convert_to_tensor(gradient) for gradient in gradients]
    with torch.no_grad():
        norms = torch._foreach_norm(gradients)
        total = torch.linalg.vector_norm(torch.stack([norm.float() for norm in norms]))
        scale = clip_norm * torch.clamp(1.0 / total, max=1.0 / clip_norm) + (total - total)
        return torch._foreach_mul(gradients, scale)
