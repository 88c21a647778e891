import keras
from keras import ops

from kbert.training.adam_epsilon import EPSILON_STYLES

# LayerNorm's `gamma`/`beta` and every `bias` get no weight decay, as in BERT. Keras
# searches these patterns in the variable name: "gamma" on JAX and PyTorch, the
# TensorFlow variable's "layer_norm/gamma:0" on TensorFlow. Anchored to the last name
# component, so that a variable merely containing the word (say `beta_embedding`) keeps
# its decay.
NO_DECAY_VARIABLE_NAMES = (r"(?:^|/)(?:gamma|beta|bias)(?::\d+)?$",)


@keras.saving.register_keras_serializable(package="kbert")
class BertAdamW(keras.optimizers.AdamW):
    """AdamW as BERT fine-tunes: epsilon 1e-6, no decay on LayerNorm parameters and biases.

    A stock `keras.optimizers.AdamW` forgets `exclude_from_weight_decay` when it is saved
    (a `.keras` file, `compile_from_config`); this one keeps the exclusions in its config.

    Args:
        learning_rate: a float or a schedule.
        weight_decay: decoupled weight decay.
        epsilon: Adam's epsilon (BERT's 1e-6, not Keras' 1e-7).
        no_decay_patterns: regular expressions; a variable whose path matches one gets
            no weight decay.
        epsilon_style: "keras" (epsilon added to sqrt(v) before the bias correction, as
            every Keras Adam does) or "torch" (added to the bias-corrected sqrt(v_hat), as
            `torch.optim.AdamW` does), so that a Hugging Face Trainer recipe reproduces
            step for step. The two differ by a factor sqrt(1 - beta_2^t) on epsilon:
            most early in training, where Adam's steps are largest.
        **kwargs: other `keras.optimizers.AdamW` arguments.

    Example:

    >>> model.compile(optimizer=BertAdamW(learning_rate=2e-5))
    """

    def __init__(
        self,
        learning_rate=5e-5,
        weight_decay=0.01,
        epsilon=1e-6,
        no_decay_patterns=NO_DECAY_VARIABLE_NAMES,
        epsilon_style="keras",
        **kwargs,
    ):
        if epsilon_style not in EPSILON_STYLES:
            raise ValueError(
                f"`epsilon_style` must be one of {EPSILON_STYLES}. "
                f"Received: epsilon_style={epsilon_style!r}"
            )
        super().__init__(
            learning_rate=learning_rate, weight_decay=weight_decay, epsilon=epsilon, **kwargs
        )
        if epsilon_style == "torch" and self.amsgrad:
            raise ValueError("`epsilon_style='torch'` does not support `amsgrad=True`.")
        self.epsilon_style = epsilon_style
        self.no_decay_patterns = tuple(no_decay_patterns)
        self.exclude_from_weight_decay(var_names=list(self.no_decay_patterns))

    def build(self, var_list):
        # The variables an unbuilt optimizer has (the step counter, the learning rate)
        # stay first after building; see `load_own_variables`.
        self._unbuilt_variable_count = len(self.variables)
        super().build(var_list)

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        # Keras' hook for updating all variables at once (what its own torch optimizers
        # override). Where it is not called, `update_step` below gives the same result.
        if keras.backend.backend() == "torch" and not self.amsgrad and trainable_variables:
            from kbert.training import parallel_adam_update

            if parallel_adam_update.update_all(
                self, grads, trainable_variables, learning_rate, self.epsilon_style
            ):
                return
        super()._backend_update_step(grads, trainable_variables, learning_rate)

    def _clip_gradients(self, grads):
        # Keras' global-norm clipping squares each gradient into a temporary, sums it and
        # multiplies it into a third tensor; on PyTorch one `_foreach_norm` reads each
        # gradient once (as `torch.nn.utils.clip_grad_norm_` does).
        if (
            keras.backend.backend() == "torch"
            and self.global_clipnorm
            and not self.clipnorm
            and not self.clipvalue
            and grads
            and all(gradient is not None for gradient in grads)
        ):
            from kbert.training import parallel_adam_update

            return parallel_adam_update.clip_by_global_norm(grads, self.global_clipnorm)
        return super()._clip_gradients(grads)

    def update_step(self, gradient, variable, learning_rate):
        if self.epsilon_style == "keras":
            return super().update_step(gradient, variable, learning_rate)
        # torch.optim.AdamW's update (the decoupled decay is applied before, by Keras):
        # variable -= lr / (1 - beta_1^t) * m / (sqrt(v) / sqrt(1 - beta_2^t) + epsilon).
        dtype = variable.dtype
        gradient = ops.cast(gradient, dtype)
        step = ops.cast(self.iterations + 1, dtype)
        first_correction = 1 - ops.power(ops.cast(self.beta_1, dtype), step)
        second_correction = 1 - ops.power(ops.cast(self.beta_2, dtype), step)
        index = self._get_variable_index(variable)
        m = self._momentums[index]
        v = self._velocities[index]
        self.assign_add(m, ops.multiply(ops.subtract(gradient, m), 1 - self.beta_1))
        self.assign_add(v, ops.multiply(ops.subtract(ops.square(gradient), v), 1 - self.beta_2))
        denominator = ops.add(ops.divide(ops.sqrt(v), ops.sqrt(second_correction)), self.epsilon)
        step_size = ops.divide(ops.cast(learning_rate, dtype), first_correction)
        self.assign_sub(variable, ops.multiply(step_size, ops.divide(m, denominator)))

    def load_own_variables(self, store):
        """Keras loading. The state of a saved optimizer that never stepped (a model
        compiled by `from_preset` and saved untrained) fits a built one: its counter
        and learning rate are restored and the moments stay zero, as they were."""
        saved = len(store.keys())
        if self.built and saved == getattr(self, "_unbuilt_variable_count", -1):
            for index in range(saved):
                self.variables[index].assign(store[str(index)])
            return
        super().load_own_variables(store)

    def get_config(self):
        return {
            **super().get_config(),
            "no_decay_patterns": list(self.no_decay_patterns),
            "epsilon_style": self.epsilon_style,
        }
