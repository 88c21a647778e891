"""The base of the task models with BERT's masked-LM head."""

from kbert.layers.masked_lm_head import MaskedLMHead
from kbert.models.bert_task import BertTask


class MaskedLMTask(BertTask):
    """A `BertTask` with BERT's masked-LM head on the sequence output.

    The head is tied to the token embedding and runs only at `mask_positions` (B, P),
    the input these models add. The model outputs the head's logits (`BertMaskedLM`),
    or what a subclass's `_task_outputs` makes of them (`BertPretrainer` adds the
    next-sentence head's).

    Args:
        backbone: a `BertBackbone`.
        head_activation: activation of the head's transform; defaults to the backbone's
            (as in BERT). keras-hub's head uses exact "gelu" over a tanh-GELU encoder.
        head_layer_norm_epsilon: epsilon of the head's LayerNorm; defaults to the
            backbone's (keras-hub's head uses 1e-5).
    """

    extra_inputs = ("mask_positions",)

    def __init__(self, backbone, head_activation=None, head_layer_norm_epsilon=None, **kwargs):
        # === Layers ===
        masked_lm_head = MaskedLMHead.for_backbone(
            backbone, head_activation, head_layer_norm_epsilon, name="masked_lm_head"
        )
        # === Functional model ===
        inputs = self._task_inputs(backbone)
        encoded = backbone({key: inputs[key] for key in backbone.input})
        mlm_logits = masked_lm_head(encoded["sequence_output"], inputs["mask_positions"])
        outputs = self._task_outputs(backbone, encoded, mlm_logits)
        self._finish_init(backbone, inputs, outputs, **kwargs)
        # === Config ===
        self.head_activation = masked_lm_head.activation
        self.head_layer_norm_epsilon = masked_lm_head.layer_norm_epsilon

    def _task_outputs(self, backbone, encoded, mlm_logits):
        """The model's outputs, from the backbone's (`encoded`) and the masked-LM
        head's logits (B, P, V): those logits alone here."""
        return mlm_logits

    def task_config(self):
        return {
            "head_activation": self.head_activation,
            "head_layer_norm_epsilon": self.head_layer_norm_epsilon,
        }
