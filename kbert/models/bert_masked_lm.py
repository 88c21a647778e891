import keras

from kbert.layers.masked_lm_head import MaskedLMHead
from kbert.models.bert_task import BertTask
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

    def fill_mask(
        self, text_or_texts, top_k=5, targets=None, joint=False, tokenizer=None, batch_size=32
    ):
        """The most probable tokens at each `[MASK]` of one or several texts.

        See `kbert.inference.fill_mask` for the details.

        Args:
            text_or_texts: a string or a list of strings, each with a `[MASK]`.
            top_k: candidates per mask.
            targets: optional list of words (single vocabulary tokens) to score
                at each mask instead of the whole vocabulary.
            joint: fill several masks one at a time, most confident first.
            tokenizer: overrides `self.tokenizer`.
            batch_size: texts per forward pass.

        Returns:
            A `kbert.inference.FillMaskResult` for a string, a list for a list.

        Examples:

        >>> model = BertMaskedLM.from_preset("path/to/preset")
        >>> model.fill_mask("The [MASK] sat.").masks[0].candidates[0].token
        'cat'
        """
        from kbert.inference.fill_mask import fill_mask

        return fill_mask(
            self,
            tokenizer,
            text_or_texts,
            top_k=top_k,
            targets=targets,
            joint=joint,
            batch_size=batch_size,
        )
