import keras

from kbert.models.float32_outputs import float32_logits
from kbert.models.head_dense import head_dense
from kbert.models.input_validation import PACKED_INPUT, is_packed, validate_inputs
from kbert.models.masked_lm_task import MaskedLMTask
from kbert.preprocessing.pretrainer_preprocessor import PretrainerPreprocessor

# What packed rows add to the inputs: each packed sequence's [CLS] position.
PACKED_PRETRAINER_INPUTS = ("cls_positions",)


class _PackedPretrainer(keras.Model):
    """The pretrainer's layers on packed rows, sharing its weights (see `BertPretrainer`).

    A subclassed view, as `BertBackbone`'s are: the functional graph has no packed
    inputs, and its next-sentence head reads one [CLS] per row.
    """

    def __init__(self, pretrainer, **kwargs):
        super().__init__(**kwargs)
        self.pretrainer = pretrainer

    def call(self, inputs):
        pretrainer = self.pretrainer
        backbone = pretrainer.backbone
        encoded = backbone({name: inputs[name] for name in (*backbone.input, PACKED_INPUT)})
        sequence_output = encoded["sequence_output"]  # (B, L, H)
        pooled = backbone.pooler(sequence_output, inputs["cls_positions"])  # (B, P, H)
        return {
            "mlm_logits": pretrainer.get_layer("masked_lm_head")(
                sequence_output, inputs["mask_positions"]
            ),
            "nsp_logits": pretrainer.get_layer("next_sentence_head")(pooled),  # (B, P, 2)
        }


@keras.saving.register_keras_serializable(package="kbert")
class BertPretrainer(MaskedLMTask):
    """BERT's pretraining model: masked-LM and next-sentence prediction.

    Inputs: the backbone's dict plus `mask_positions` (B, P), the positions to predict.
    Outputs: dict with `mlm_logits` (B, P, V) and `nsp_logits` (B, 2), both float32.
    Class 0 of `nsp_logits` is "B follows A" (IsNext), class 1 "B is random", as in the
    original code and Hugging Face.

    The masked-LM head is tied to the token embedding and runs only at `mask_positions`.
    For `fit`, pass `y={"mlm_logits": masked_token_ids, "nsp_logits": labels}` and
    `sample_weight={"mlm_logits": mask_weights}` so padded predictions do not count.

    Packed rows (several instances per row, as MLPerf's BERT packs them): the inputs add
    `sequence_index` (B, L) (see `BertBackbone`) and `cls_positions` (B, P), the first
    token of each packed instance (0 in unused slots); `mask_positions` count from the
    start of the row. `nsp_logits` are then (B, P, 2), one pair per instance, from the
    pooler at each [CLS]; weight the unused slots 0. Every instance gets the logits it
    gets alone in a row. `kbert.pretraining.SequencePacker` makes such rows.

    Args: those of `MaskedLMTask` (`backbone`, `head_activation`,
    `head_layer_norm_epsilon`).
    """

    head_layer_names = ("masked_lm_head", "next_sentence_head")
    preprocessor_class = PretrainerPreprocessor

    def _task_outputs(self, backbone, encoded, mlm_logits):
        next_sentence_head = head_dense(backbone, 2, name="next_sentence_head")
        return {
            "mlm_logits": mlm_logits,
            "nsp_logits": float32_logits(next_sentence_head(encoded["pooled_output"])),
        }

    def __call__(self, inputs, *args, **kwargs):
        if not is_packed(inputs):
            return super().__call__(inputs, *args, **kwargs)
        validate_inputs(
            inputs, self.bert_config, self.extra_inputs, packed_inputs=PACKED_PRETRAINER_INPUTS
        )
        view = self.__dict__.get("_packed_model")
        if view is None:
            view = _PackedPretrainer(self, name=f"{self.name}_packed")
            names = (*self.backbone.input, PACKED_INPUT, *self.extra_inputs,
                     *PACKED_PRETRAINER_INPUTS)
            view({name: keras.KerasTensor((1, 2), "int32") for name in names})
            # Untracked, as the backbone's views: tracking it would make a cycle.
            self.__dict__["_packed_model"] = view
        return view(inputs, *args, **kwargs)

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
