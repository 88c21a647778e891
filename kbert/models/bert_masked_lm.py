import keras

from kbert.inference.fill_mask import fill_mask
from kbert.models.inference_method import InferenceMethod
from kbert.models.masked_lm_task import MaskedLMTask
from kbert.preprocessing.masked_lm_preprocessor import MaskedLMPreprocessor


@keras.saving.register_keras_serializable(package="kbert")
class BertMaskedLM(MaskedLMTask):
    """BERT with its masked-LM head only (no next-sentence head).

    Inputs: the backbone's dict plus `mask_positions` (B, P); or, in `fit`/`evaluate`,
    plain texts, masked 80/10/10 on the fly, and in `predict`, texts with `[MASK]`
    (see `MaskedLMPreprocessor`).
    Outputs: float32 logits (B, P, V) over the vocabulary at each masked position.
    The head is tied to the token embedding and runs only at `mask_positions`.

    Args: those of `MaskedLMTask` (`backbone`, `head_activation`,
    `head_layer_norm_epsilon`).
    """

    head_layer_names = ("masked_lm_head",)
    preprocessor_class = MaskedLMPreprocessor
    # `model.fill_mask(...)` is `kbert.inference.fill_mask(model, model.tokenizer, ...)`.
    fill_mask = InferenceMethod(fill_mask)

    def default_loss(self):
        # Averaged over the real predictions (`sample_weight` 1), not the padded slots.
        return keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction="mean_with_sample_weight"
        )

    def default_metrics(self):
        return None

    def default_weighted_metrics(self):
        # Weighted: padded prediction slots must not count as misses.
        return [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
