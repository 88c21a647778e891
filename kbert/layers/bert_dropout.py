import keras



@keras.saving.register_keras_serializable(package="kbert")
class BertDropout(keras.layers.Dropout):
    """Keras' `Dropout`, with JAX's counter-based generator for the mask on JAX.

    Keras' JAX dropout draws its mask with JAX's default generator, threefry: twenty
    rounds of integer arithmetic per pair of random words, expanded inline wherever a
    mask is drawn. A BERT training step draws a mask for the embeddings, for every
    layer's attention probabilities (B x heads x L x L) and for two more (B x L x H)
    outputs per layer, so on a CPU the threefry code is a fifth of what XLA compiles
    for the step and a tenth of what the step runs (benchmarks/NOTES.md). On JAX this
    layer draws the same Bernoulli mask from XLA's `RngBitGenerator` instead (JAX's
    "rbg" keys), keyed by the layer's Keras seed generator exactly as Keras keys
    threefry: the masks are a pure function of the seed state a training checkpoint
    saves, so a resumed run draws the masks an uninterrupted one would.

    TensorFlow and PyTorch, inference everywhere and a `noise_shape` run Keras'
    `Dropout` unchanged.

    Args:
        rate: the fraction of the inputs dropped, in [0, 1).
        **kwargs: `keras.layers.Dropout`'s other arguments (`noise_shape`, `seed`,
            `name`, `dtype`).

    Example:

    >>> dropout = BertDropout(0.1, seed=0)
    >>> outputs = dropout(keras.ops.ones((2, 8)), training=True)
    """

    def call(self, inputs, training=False):
        if not training or self.rate == 0 or self.noise_shape is not None or _backend() != "jax":
            return super().call(inputs, training=training)
        import jax
        import jax.numpy as jnp

        seed = keras.ops.convert_to_tensor(self.seed_generator.next(), dtype="uint32")
        # An "rbg" key is four 32-bit words; the seed generator's state is two.
        key = jax.random.wrap_key_data(jnp.concatenate([seed, seed[::-1]]), impl="rbg")
        keep = 1.0 - self.rate
        kept = jax.random.bernoulli(key, keep, inputs.shape)
        scaled = inputs / jnp.asarray(keep, dtype=inputs.dtype)
        return jnp.where(kept, scaled, jnp.zeros_like(inputs))


def _backend():
    return keras.backend.backend()
