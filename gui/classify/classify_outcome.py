"""One classification, tagging or choice of an ending for the "Classify & tag" tab, made
in a worker."""

import logging
from dataclasses import dataclass

from kbert_gui.classify.classify_head import CHOOSE_VERB
from kbert_gui.classify.classify_head import CLASSIFY_VERB
from kbert_gui.classify.classify_head import TAG_VERB
from kbert_gui.classify.classify_head import ClassifyHead
from kbert_gui.services.thread_log_handler import ThreadLogHandler

# The field of `ClassifyOutcome` each drawn verb's result goes to; another verb's is `value`.
RESULT_FIELDS = {CLASSIFY_VERB: "classification", TAG_VERB: "entities", CHOOSE_VERB: "choice"}

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
        value: what the inference verb of another head gave (a head a package added
            to the model table, e.g. a regressor's number), else None.
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
    value: object = None

    @property
    def head(self):
        """The model's `ClassifyHead` (its verb and inputs, from kbert's tables)."""
        return ClassifyHead.of(self.description)

    @classmethod
    def compute(cls, models, source, text, pair=None, aggregation="first", endings=None):
        """Runs the head the model of `source` was saved with on `text`. Call in a worker.

        The model answers with its class's inference verb (`ClassifyHead`): a
        classifier classifies `text` (with `pair` as the second text when not None),
        a tagger finds its entities (`aggregation` as in `tag`), a multiple-choice
        model picks the ending of the context `text` among `endings`, and a head a
        package added gives its verb's result as `value`. A model the tab does not run
        carries no result, and the tab says so. An empty `text` (or fewer than two
        endings) loads the model (so the first real request is quick) and predicts
        nothing.
        """
        description = models.describe(source)
        endings = None if endings is None else tuple(endings)
        head = ClassifyHead.of(description)
        if not head.shown:
            return cls(source, description, text, pair, endings=endings)
        model = models.model(head.class_name, source)
        fresh_heads = tuple(model.freshly_initialized_heads)
        if not head.is_ready(text, endings):
            return cls(source, description, text, pair, fresh_heads=fresh_heads, endings=endings)
        notes = []
        options = {"aggregation": aggregation} if head.verb == TAG_VERB else {}
        with ThreadLogHandler.capture(notes.append, level=logging.WARNING):
            result = getattr(model, head.verb)(*head.arguments(text, pair, endings), **options)
        result = tuple(result) if head.verb == TAG_VERB else result
        return cls(
            source, description, text, pair, notes=tuple(notes), fresh_heads=fresh_heads,
            endings=endings, **{RESULT_FIELDS.get(head.verb, "value"): result},
        )

    @property
    def has_head(self):
        """Whether the model answered (classified, tagged, chose, or gave a value)."""
        results = (self.classification, self.entities, self.choice, self.value)
        return any(result is not None for result in results)
