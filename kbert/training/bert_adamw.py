import keras

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
        **kwargs,
    ):
        super().__init__(
            learning_rate=learning_rate, weight_decay=weight_decay, epsilon=epsilon, **kwargs
        )
        self.no_decay_patterns = tuple(no_decay_patterns)
        self.exclude_from_weight_decay(var_names=list(self.no_decay_patterns))

    def build(self, var_list):
        # The variables an unbuilt optimizer has (the step counter, the learning rate)
        # stay first after building; see `load_own_variables`.
        self._unbuilt_variable_count = len(self.variables)
        super().build(var_list)

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
        return {**super().get_config(), "no_decay_patterns": list(self.no_decay_patterns)}
