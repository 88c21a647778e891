import keras

from kbert.layers.host_truncated_normal import HostTruncatedNormal
from kbert.layers.masked_lm_head import MaskedLMHead
from kbert.models.bert_task import BertTask
from kbert.preprocessing.pretrainer_preprocessor import PretrainerPreprocessor


@keras.saving.register_keras_serializable(package="kbert")
class BertPretrainer(BertTask):
    """BERT's pretraining model: masked-LM and next-sentence prediction.

    Inputs: the backbone's dict plus `mask_positions` (B, P), the positions to predict.
    Outputs: dict with `mlm_logits` (B, P, V) and `nsp_logits` (B, 2), both float32.
    Class 0 of `nsp_logits` is "B follows A" (IsNext), class 1 "B is random", as in the
    original code and Hugging Face.

    The masked-LM head is tied to the token embedding and runs only at `mask_positions`.
    For `fit`, pass `y={"mlm_logits": masked_token_ids, "nsp_logits": labels}` and
    `sample_weight={"mlm_logits": mask_weights}` so padded predictions do not count.

    Args:
        backbone: a `BertBackbone`.
        head_activation: activation of the head's transform; defaults to the backbone's
            (as in BERT). keras-hub's head uses exact "gelu" over a tanh-GELU encoder.
        head_layer_norm_epsilon: epsilon of the head's LayerNorm; defaults to the
            backbone's (keras-hub's head uses 1e-5).
    """

    extra_inputs = ("mask_positions",)
    head_layer_names = ("masked_lm_head", "next_sentence_head")
    preprocessor_class = PretrainerPreprocessor

    def __init__(self, backbone, head_activation=None, head_layer_norm_epsilon=None, **kwargs):
        config = backbone.bert_config
        # === Layers ===
        masked_lm_head = MaskedLMHead.for_backbone(
            backbone, head_activation, head_layer_norm_epsilon, name="masked_lm_head"
        )
        head_activation = masked_lm_head.activation
        head_layer_norm_epsilon = masked_lm_head.layer_norm_epsilon
        next_sentence_head = keras.layers.Dense(
            2,
            kernel_initializer=HostTruncatedNormal(stddev=config.initializer_range),
            dtype="float32",
            name="next_sentence_head",
        )
        # === Functional model ===
        inputs = self._task_inputs(backbone)
        backbone_inputs = {key: inputs[key] for key in backbone.input}
        encoded = backbone(backbone_inputs)
        outputs = {
            "mlm_logits": masked_lm_head(encoded["sequence_output"], inputs["mask_positions"]),
            "nsp_logits": next_sentence_head(encoded["pooled_output"]),
        }
        self._finish_init(backbone, inputs, outputs, **kwargs)
        # === Config ===
        self.head_activation = head_activation
        self.head_layer_norm_epsilon = head_layer_norm_epsilon

    def task_config(self):
        return {
            "head_activation": self.head_activation,
            "head_layer_norm_epsilon": self.head_layer_norm_epsilon,
        }

    def default_loss(self):
        return {
            # Averaged over the real predictions (weight 1), not the padded slots, as
            # the original run_pretraining.py divides by the sum of the weights.
            "mlm_logits": keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, reduction="mean_with_sample_weight"
            ),
            "nsp_logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        }

    def default_metrics(self):
        return {"nsp_logits": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]}

    def default_weighted_metrics(self):
        # Weighted by `mask_weights`: padded prediction slots must not count as misses.
        return {"mlm_logits": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]}
