import keras

from kbert.layers.masked_lm_head import MaskedLMHead
from kbert.models.bert_task import BertTask


@keras.saving.register_keras_serializable(package="kbert")
class BertMaskedLM(BertTask):
    """BERT with its masked-LM head only (no next-sentence head).

    Inputs: the backbone's dict plus `mask_positions` (B, P).
    Outputs: float32 logits (B, P, V) over the vocabulary at each masked position.
    The head is tied to the token embedding and runs only at `mask_positions`.

    Args:
        backbone: a `BertBackbone`.
    """

    extra_inputs = ("mask_positions",)
    head_layer_names = ("masked_lm_head",)

    def __init__(self, backbone, **kwargs):
        config = backbone.bert_config
        # === Layers ===
        masked_lm_head = MaskedLMHead(
            backbone.token_embedding,
            activation=config.activation,
            layer_norm_epsilon=config.layer_norm_epsilon,
            initializer_range=config.initializer_range,
            dtype=backbone.dtype_policy,
            name="masked_lm_head",
        )
        # === Functional model ===
        inputs = self._task_inputs(backbone)
        backbone_inputs = {key: inputs[key] for key in backbone.input}
        encoded = backbone(backbone_inputs)
        outputs = masked_lm_head(encoded["sequence_output"], inputs["mask_positions"])
        self._finish_init(backbone, inputs, outputs, **kwargs)
