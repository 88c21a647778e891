"""One classification or tagging of a text for the "Classify & tag" tab, made in a worker."""

import logging
from dataclasses import dataclass

from kbert_gui.services.thread_log_handler import ThreadLogHandler

CLASSIFIER_CLASS = "BertClassifier"
TAGGER_CLASS = "BertTokenClassifier"


@dataclass(frozen=True)
class ClassifyOutcome:
    """What the current model's own head made of a text.

    Args:
        source: the model (preset name or folder) that predicted.
        description: its `ModelDescription` (class, labels).
        text: the text, exactly as predicted (offsets point into it).
        pair: the second text of a pair (classifiers), or None.
        classification: a classifier's `kbert.inference.Classification`, else None.
        entities: a tagger's `kbert.inference.EntitySpan`s in text order, else None.
        notes: kbert's warnings about the input (a text longer than the model's limit
            is truncated, and `classify`/`tag` say so), for the tab to show.
        fresh_heads: the model's heads that were never trained (its
            `freshly_initialized_heads`): its predictions are noise.
    """

    source: str
    description: object
    text: str
    pair: object = None
    classification: object = None
    entities: object = None
    notes: tuple = ()
    fresh_heads: tuple = ()

    @classmethod
    def compute(cls, models, source, text, pair=None, aggregation="first"):
        """Runs the head the model of `source` was saved with on `text`. Call in a worker.

        A classifier classifies `text` (with `pair` as the second text when not
        None) through `BertClassifier.classify`; a tagger finds its entities through
        `BertTokenClassifier.tag` (`aggregation` as there). Any other model has no
        such head: the outcome then carries neither, and the tab says so. An empty
        `text` loads the model (so the first real request is quick) and predicts
        nothing.
        """
        description = models.describe(source)
        if description.class_name not in (CLASSIFIER_CLASS, TAGGER_CLASS):
            return cls(source, description, text, pair)
        model = models.model(description.class_name, source)
        fresh_heads = tuple(model.freshly_initialized_heads)
        if not text.strip():
            return cls(source, description, text, pair, fresh_heads=fresh_heads)
        notes = []
        with ThreadLogHandler.capture(notes.append, level=logging.WARNING):
            if description.class_name == CLASSIFIER_CLASS:
                classification, entities = model.classify(text, pairs=pair), None
            else:
                classification, entities = None, tuple(model.tag(text, aggregation=aggregation))
        return cls(
            source, description, text, pair, classification, entities, tuple(notes), fresh_heads
        )

    @property
    def has_head(self):
        """Whether the model classified or tagged (it has a classifier or tagger head)."""
        return self.classification is not None or self.entities is not None
