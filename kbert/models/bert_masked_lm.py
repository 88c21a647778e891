import keras

from kbert.inference.fill_mask import fill_mask
from kbert.layers.masked_lm_head import MaskedLMHead
from kbert.models.bert_task import BertTask
from kbert.models.inference_method import InferenceMethod
from kbert.preprocessing.masked_lm_preprocessor import MaskedLMPreprocessor


@keras.saving.register_keras_serializable(package="kbert")
class BertMaskedLM(BertTask):
    """BERT with its masked-LM head only (no next-sentence head).

    Inputs: the backbone's dict plus `mask_positions` (B, P); or, in `fit`/`evaluate`,
    plain texts, masked 80/10/10 on the fly, and in `predict`, texts with `[MASK]`
    (see `MaskedLMPreprocessor`).
    Outputs: float32 logits (B, P, V) over the vocabulary at each masked position.
    The head is tied to the token embedding and runs only at `mask_positions`.

    Args:
        backbone: a `BertBackbone`.
        head_activation: activation of the head's transform; defaults to the backbone's
            (as in BERT). keras-hub's head uses exact "gelu" over a tanh-GELU encoder.
        head_layer_norm_epsilon: epsilon of the head's LayerNorm; defaults to the
            backbone's (keras-hub's head uses 1e-5).
    """

    extra_inputs = ("mask_positions",)
    head_layer_names = ("masked_lm_head",)
    preprocessor_class = MaskedLMPreprocessor
    # `model.fill_mask(...)` is `kbert.inference.fill_mask(model, model.tokenizer, ...)`.
    fill_mask = InferenceMethod(fill_mask)

    def __init__(self, backbone, head_activation=None, head_layer_norm_epsilon=None, **kwargs):
        # === Layers ===
        masked_lm_head = MaskedLMHead.for_backbone(
            backbone, head_activation, head_layer_norm_epsilon, name="masked_lm_head"
        )
        head_activation = masked_lm_head.activation
        head_layer_norm_epsilon = masked_lm_head.layer_norm_epsilon
        # === Functional model ===
        inputs = self._task_inputs(backbone)
        backbone_inputs = {key: inputs[key] for key in backbone.input}
        encoded = backbone(backbone_inputs)
        outputs = masked_lm_head(encoded["sequence_output"], inputs["mask_positions"])
        self._finish_init(backbone, inputs, outputs, **kwargs)
        # === Config ===
        self.head_activation = head_activation
        self.head_layer_norm_epsilon = head_layer_norm_epsilon

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

    def task_config(self):
        return {
            "head_activation": self.head_activation,
            "head_layer_norm_epsilon": self.head_layer_norm_epsilon,
        }
