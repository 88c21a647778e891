"""Texts for `BertMaskedLM`: BERT's 80/10/10 masking, new masks every epoch."""

import numpy as np

from kbert.argument_checks import describe_value
from kbert.preprocessing.bert_preprocessor import BertPreprocessor
from kbert.preprocessing.bert_preprocessor import encoded_features
from kbert.preprocessing.bucketed_dataset import BucketedDataset
from kbert.preprocessing.masking import check_masking_arguments
from kbert.preprocessing.masking import mask_tokens
from kbert.preprocessing.masking import special_token_ids_of
from kbert.preprocessing.record_fields import RecordFields
from kbert.preprocessing.task_features import TaskFeatures
from kbert.preprocessing.text_classifier_preprocessor import parse_text_inputs
from kbert.preprocessing.text_encoding import encode_texts


class MaskedLMPreprocessor(BertPreprocessor):
    """Masked-LM training rows from plain texts (or text pairs); no labels needed.

    For `fit` and `evaluate`, every batch is masked as in BERT: `masked_lm_prob` of each
    row's tokens (at most `max_predictions_per_seq`) are chosen, 80% become `[MASK]`, 10%
    a random token, 10% stay; the targets are the original tokens, weighted 1 (0 on the
    padding slots). The masks are drawn from `(seed, epoch, batch)`, so they change every
    epoch and are the same in every run. For `predict`, the positions to predict are the
    `[MASK]` tokens written in the texts.

    Inputs (`x`): as `TextClassifierPreprocessor` (texts, or text pairs), records,
    DataFrames and `datasets.Dataset`s included (their other fields are not read).

    Args:
        tokenizer: a `BertTokenizer`.
        sequence_length: the longest packed row.
        masked_lm_prob: the share of tokens to predict.
        max_predictions_per_seq: the most predictions per row.

    Example:

    >>> model = BertMaskedLM.from_preset("demo")
    >>> model.fit(["It is a truth universally acknowledged.", "In the beginning."], epochs=1)
    >>> model.predict(["The [MASK] sat."]).shape      # (texts, masks, vocabulary)
    (1, 1, 8000)
    """

    def __init__(
        self, tokenizer, sequence_length=None, masked_lm_prob=0.15, max_predictions_per_seq=20
    ):
        super().__init__(tokenizer, sequence_length)
        self.special_token_ids = special_token_ids_of(tokenizer)
        check_masking_arguments(
            tokenizer.vocabulary_size,
            tokenizer.mask_token_id,
            self.special_token_ids,
            masked_lm_prob,
            max_predictions_per_seq,
        )
        self.masked_lm_prob = masked_lm_prob
        self.max_predictions_per_seq = max_predictions_per_seq

    input_fields = ("text", "pair")
    record_fields = RecordFields(inputs=("text", "pair"), optional=("pair",))

    def parse_inputs(self, x):
        return parse_text_inputs(x)

    def features(self, x, y=None):
        if y is not None:
            raise ValueError(
                "A masked-LM learns from the texts alone: its targets are the masked "
                f"tokens. Pass no `y`. Received: y of type {type(y).__name__}"
            )
        return encoded_features(self._encode(x))

    def _encode(self, x):
        fields = self.parse(x)
        return encode_texts(self.tokenizer, fields["text"], fields["pair"], self.sequence_length)

    def prediction_features(self, x):
        texts = self.parse(x)["text"]
        encodings = self._encode(x)
        positions = []
        for index, encoding in enumerate(encodings):
            found = np.flatnonzero(encoding.token_ids == self.tokenizer.mask_token_id)
            if not len(found):
                raise ValueError(
                    f"Text {index} has no {self.tokenizer.mask_token}: `predict` fills the "
                    f"masks written in the text. Received: {describe_value(texts[index])}"
                )
            positions.append(found)
        return TaskFeatures(
            token_ids=[encoding.token_ids for encoding in encodings],
            segment_ids=[encoding.segment_ids for encoding in encodings],
            labels=None,
            example_indices=np.arange(len(encodings)),
            mask_positions=positions,
        )

    def _example_weights(self, sample_weight, features):
        raise ValueError(
            "A masked-LM weighs its predictions itself (padding slots get 0). "
            "Received: sample_weight"
        )

    def _make_dataset(self, features, **settings):
        if features.mask_positions is not None:
            return BucketedDataset(
                features.token_ids,
                features.segment_ids,
                pad_token_id=self.tokenizer.pad_token_id,
                extra_inputs={"mask_positions": features.mask_positions},
                **settings,
            )
        return _MaskedBatches(
            self,
            features.token_ids,
            features.segment_ids,
            features.labels,
            pad_token_id=self.tokenizer.pad_token_id,
            **settings,
        )

    def masked(self, inputs, labels, rng):
        """`(inputs, targets, weights)` of one padded batch, masked with `rng`."""
        masked = mask_tokens(
            inputs["token_ids"],
            rng,
            mask_token_id=self.tokenizer.mask_token_id,
            special_token_ids=self.special_token_ids,
            vocabulary_size=self.tokenizer.vocabulary_size,
            masked_lm_prob=self.masked_lm_prob,
            max_predictions_per_seq=self.max_predictions_per_seq,
        )
        inputs = dict(
            inputs, token_ids=masked["token_ids"], mask_positions=masked["mask_positions"]
        )
        return inputs, masked["mask_ids"], masked["mask_weights"]

    def get_config(self):
        return {
            **super().get_config(),
            "masked_lm_prob": self.masked_lm_prob,
            "max_predictions_per_seq": self.max_predictions_per_seq,
        }


class _MaskedBatches(BucketedDataset):
    """A `BucketedDataset` whose batches a masked-LM preprocessor masks on the way out."""

    def __init__(self, preprocessor, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.preprocessor = preprocessor

    def batch(self, epoch, index, replicas=None):
        inputs, *labels = super().batch(epoch, index, replicas)
        rng = np.random.default_rng([self.seed, epoch, index])
        return self.preprocessor.masked(inputs, labels[0] if labels else None, rng)
