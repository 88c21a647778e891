"""Sentence pairs and next-sentence labels for `BertPretrainer`, masked as in BERT."""

import numpy as np

from kbert.preprocessing.bert_preprocessor import encoded_features
from kbert.preprocessing.bert_preprocessor import label_ids
from kbert.preprocessing.masked_lm_preprocessor import MaskedLMPreprocessor

# Class 0 of the next-sentence head is "B follows A", class 1 "B is random", as in the
# original code and Hugging Face.
NEXT_SENTENCE_LABELS = ("is_next", "is_random")


class PretrainerPreprocessor(MaskedLMPreprocessor):
    """BERT's two pretraining tasks from segment pairs: masked-LM and next sentence.

    Each example is a pair `(A, B)` segment-packed as `[CLS] A [SEP] B [SEP]` and masked as
    `MaskedLMPreprocessor` masks; its label says whether B followed A in the text
    (0 or "is_next") or was drawn from elsewhere (1 or "is_random"). Whole corpora go
    through `kbert create-pretraining-data` and `kbert pretrain` instead, which build
    such pairs from documents with the original recipe.

    Inputs (`x`): a pair of lists `(first_segments, second_segments)`, a list of
    `(A, B)` tuples, or a dict with "text" and "pair" lists. Labels (`y`): one
    next-sentence label per pair.

    Args: as `MaskedLMPreprocessor`.
    """

    def features(self, x, y=None):
        fields = self.parse(x)
        if fields["pair"] is None:
            raise ValueError(
                "Pretraining takes segment pairs (A, B): pass (first_segments, "
                "second_segments) or a list of (A, B) tuples. Received: single texts"
            )
        encodings = self._encode(x)
        labels = None
        if y is not None:
            labels = label_ids(
                [y] if isinstance(y, str) else y, NEXT_SENTENCE_LABELS, len(NEXT_SENTENCE_LABELS)
            )
            if len(labels) != len(encodings):
                raise ValueError(
                    f"`y` must have one next-sentence label per pair ({len(encodings)}). "
                    f"Received: {len(labels)}"
                )
        return encoded_features(encodings, labels)

    def masked(self, inputs, labels, rng):
        if labels is None:
            raise ValueError(
                "Training or scoring a pretrainer needs the next-sentence label of every "
                "pair (`y`). Received: y=None"
            )
        inputs, mask_ids, mask_weights = super().masked(inputs, None, rng)
        targets = {"mlm_logits": mask_ids, "nsp_logits": labels}
        weights = {"mlm_logits": mask_weights, "nsp_logits": np.ones(len(labels), np.float32)}
        return inputs, targets, weights
