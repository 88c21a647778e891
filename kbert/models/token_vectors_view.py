"""A classifier or tagger run from token vectors instead of token ids (for saliency)."""

import keras

from kbert.models.bert_backbone import TOKEN_VECTORS
from kbert.models.float32_outputs import float32_logits


class TokenVectorsView(keras.Model):
    """A `LabelTask`'s forward pass from the token embeddings on, sharing its weights.

    Inputs: dict with `token_vectors` (B, L, H) float, the vectors `token_embedding`
    gives for the ids (or a blend of them with a baseline), and the (B, L) int
    `segment_ids` and `padding_mask`.
    Outputs: the task's float32 logits, (B, num_classes) or (B, L, num_classes).

    Gradient saliency differentiates these logits with respect to `token_vectors`,
    which a model taking ids cannot offer. The head's dropout is left out: the view
    is for inference only.

    Args:
        task: the `BertClassifier` or `BertTokenClassifier`.
    """

    def __init__(self, task, **kwargs):
        super().__init__(**kwargs)
        self.task = task
        self.head = task.get_layer(f"{task.head_name}_head")

    @property
    def bert_config(self):
        return self.task.bert_config

    def call(self, inputs):
        features = self.task.backbone.encode_token_vectors(inputs)[self.task.head_input]
        return float32_logits(self.head(features))

    def build_symbolically(self):
        """Builds the view by one symbolic call (as the backbone's views)."""
        hidden_size = self.task.bert_config.hidden_size
        self(
            {
                TOKEN_VECTORS: keras.KerasTensor((1, 2, hidden_size), "float32"),
                "segment_ids": keras.KerasTensor((1, 2), "int32"),
                "padding_mask": keras.KerasTensor((1, 2), "int32"),
            }
        )
        return self
