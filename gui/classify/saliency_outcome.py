"""One token saliency for the "Classify & tag" tab, computed in a worker."""

import logging
from dataclasses import dataclass

from kbert_gui.services.thread_log_handler import ThreadLogHandler


@dataclass(frozen=True)
class SaliencyOutcome:
    """The scores `kbert.inference.saliency` gave each word-piece of a text (or pair).

    Args:
        source: the model (preset name or folder) explained.
        text: the text, exactly as scored (offsets point into it).
        saliency: the `kbert.inference.TokenSaliency`.
        notes: kbert's warnings about the input (a truncated text).
        pair: the classifier's second text, scored too, or None.
    """

    source: str
    text: str
    saliency: object
    notes: tuple = ()
    pair: object = None

    @classmethod
    def compute(cls, models, source, class_name, text, target, method, pair=None):
        """Scores the pieces of `text` (and of `pair`, a classifier's second text) for
        `target` (a label, or an `EntitySpan` of a tagger's) with `method`, on the model
        of `source` loaded as `class_name`. Call in a worker."""
        from kbert.inference import saliency

        model = models.model(class_name, source)
        notes = []
        with ThreadLogHandler.capture(notes.append, level=logging.WARNING):
            result = saliency(model, None, text, target=target, method=method, pair=pair)
        return cls(source, text, result, tuple(notes), pair)
