"""What a saliency score is about: a classifier's class, or a tagger's entity.

Both become `weights` over the model's probabilities, so one objective serves both
(`weighted_probabilities`): a one-hot row (C,) for a class; for an entity, `1/n` at
the first piece of each of its `n` words, on the tag predicted there (L, C), so the
objective is the entity's `EntitySpan.score` (the mean probability of its words'
tags, `aggregation="first"`).
"""

from dataclasses import dataclass

import numpy as np

from kbert.inference.model_io import model_buckets
from kbert.inference.model_io import pad_batch
from kbert.inference.model_io import predict
from kbert.inference.model_io import softmax
from kbert.inference.token_tagging import tag

CLASSIFIER_INPUT = "pooled_output"
TAGGER_INPUT = "sequence_output"


@dataclass(frozen=True)
class SaliencyTarget:
    """The resolved target: its name, its entity span (or None), its weights."""

    label: str
    span: object
    weights: np.ndarray  # (C,) for a classifier, (L, C) for a tagger


def resolve_target(model, tokenizer, text, encoding, target):
    """The `SaliencyTarget` of `target` for `text` (see `saliency`'s argument)."""
    head_input = getattr(model, "head_input", None)
    if head_input not in (CLASSIFIER_INPUT, TAGGER_INPUT) or not hasattr(
        model, "with_token_vectors"
    ):
        raise ValueError(
            "`saliency` needs a classifier or a token classifier (`BertClassifier`, "
            f"`BertTokenClassifier`). Received: model of type {type(model).__name__}"
        )
    inputs = pad_batch(tokenizer, [encoding], model_buckets(model))
    probabilities = softmax(predict(model, inputs))[0]  # (C,) or (L_bucket, C)
    if head_input == CLASSIFIER_INPUT:
        return _class_target(model, probabilities, target)
    return _entity_target(model, tokenizer, text, encoding, probabilities, target)


def _class_target(model, probabilities, target):
    count = probabilities.shape[-1]
    labels = list(getattr(model, "label_names", None) or [str(index) for index in range(count)])
    if target is None:
        index = int(probabilities.argmax())
    elif isinstance(target, str) and target in labels:
        index = labels.index(target)
    elif isinstance(target, (int, np.integer)) and not isinstance(target, bool) and (
        0 <= target < count
    ):
        index = int(target)
    else:
        raise ValueError(
            f"`target` must be None, one of the labels {labels} or a class index below "
            f"{count}. Received: target={target!r}"
        )
    weights = np.zeros(count, np.float32)
    weights[index] = 1.0
    return SaliencyTarget(label=labels[index], span=None, weights=weights)


def _entity_target(model, tokenizer, text, encoding, probabilities, target):
    if target is None:
        entities = tag(model, tokenizer, text)
        if not entities:
            raise ValueError(
                "`saliency` on a tagger needs an entity, and the model finds none in the "
                f"text; pass one as `target`. Received: text={text!r}"
            )
        target = entities[0]
    start, end = getattr(target, "start", None), getattr(target, "end", None)
    label = getattr(target, "label", None)
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end):
        raise ValueError(
            "`target` must be None or an entity of the text (an `EntitySpan` from `tag`). "
            f"Received: target={target!r}"
        )
    text_tokens = encoding.sequence_ids == 0
    starts_word = text_tokens & np.concatenate(
        [[True], encoding.word_ids[1:] != encoding.word_ids[:-1]]
    )
    offsets = encoding.offsets
    inside = starts_word & (offsets[:, 0] < end) & (offsets[:, 1] > start)
    first_pieces = np.flatnonzero(inside)
    if len(first_pieces) == 0:
        raise ValueError(
            f"`target` covers no word of the text the model read (it may lie in a "
            f"truncated part). Received: target={target!r}"
        )
    weights = np.zeros((len(encoding), probabilities.shape[-1]), np.float32)
    tags = probabilities[first_pieces].argmax(axis=-1)
    weights[first_pieces, tags] = 1.0 / len(first_pieces)
    return SaliencyTarget(label=str(label), span=(start, end), weights=weights)
