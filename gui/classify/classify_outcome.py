"""One classification, tagging or choice of an ending for the "Classify & tag" tab, made
in a worker."""

import logging
from dataclasses import dataclass

from kbert_gui.services.thread_log_handler import ThreadLogHandler

CLASSIFIER_CLASS = "BertClassifier"
TAGGER_CLASS = "BertTokenClassifier"
CHOICE_CLASS = "BertMultipleChoice"
# The task classes the tab runs.
HEAD_CLASSES = (CLASSIFIER_CLASS, TAGGER_CLASS, CHOICE_CLASS)
# `choose` needs this many endings.
MIN_ENDINGS = 2


@dataclass(frozen=True)
class ClassifyOutcome:
    """What the current model's own head made of a text.

    Args:
        source: the model (preset name or folder) that predicted.
        description: its `ModelDescription` (class, labels).
        text: the text, exactly as predicted (offsets point into it); for a
            multiple-choice model, the context.
        pair: the second text of a pair (classifiers), or None.
        classification: a classifier's `kbert.inference.Classification`, else None.
        entities: a tagger's `kbert.inference.EntitySpan`s in text order, else None.
        notes: kbert's warnings about the input (a text longer than the model's limit
            is truncated, and `classify`/`tag`/`choose` say so), for the tab to show.
        fresh_heads: the model's heads that were never trained (its
            `freshly_initialized_heads`): its predictions are noise.
        endings: the candidate endings of the context (multiple choice), else None.
        choice: a multiple-choice model's `kbert.inference.Choice`, else None.
    """

    source: str
    description: object
    text: str
    pair: object = None
    classification: object = None
    entities: object = None
    notes: tuple = ()
    fresh_heads: tuple = ()
    endings: object = None
    choice: object = None

    @classmethod
    def compute(cls, models, source, text, pair=None, aggregation="first", endings=None):
        """Runs the head the model of `source` was saved with on `text`. Call in a worker.

        A classifier classifies `text` (with `pair` as the second text when not
        None) through `BertClassifier.classify`; a tagger finds its entities through
        `BertTokenClassifier.tag` (`aggregation` as there); a multiple-choice model
        picks the ending of the context `text` among `endings` through
        `BertMultipleChoice.choose`. Any other model has no such head: the outcome
        then carries none, and the tab says so. An empty `text` (or fewer than two
        endings) loads the model (so the first real request is quick) and predicts
        nothing.
        """
        description = models.describe(source)
        endings = None if endings is None else tuple(endings)
        if description.class_name not in HEAD_CLASSES:
            return cls(source, description, text, pair, endings=endings)
        model = models.model(description.class_name, source)
        fresh_heads = tuple(model.freshly_initialized_heads)
        choosing = description.class_name == CHOICE_CLASS
        if not text.strip() or (choosing and len(endings or ()) < MIN_ENDINGS):
            return cls(source, description, text, pair, fresh_heads=fresh_heads, endings=endings)
        notes = []
        classification = entities = choice = None
        with ThreadLogHandler.capture(notes.append, level=logging.WARNING):
            if description.class_name == CLASSIFIER_CLASS:
                classification = model.classify(text, pairs=pair)
            elif choosing:
                choice = model.choose(text, list(endings))
            else:
                entities = tuple(model.tag(text, aggregation=aggregation))
        return cls(
            source, description, text, pair, classification, entities, tuple(notes),
            fresh_heads, endings, choice,
        )

    @property
    def has_head(self):
        """Whether the model classified, tagged or chose (it has one of those heads)."""
        results = (self.classification, self.entities, self.choice)
        return any(result is not None for result in results)
