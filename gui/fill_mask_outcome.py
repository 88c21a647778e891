"""One fill-mask prediction for the explorer, computed in a worker."""

from dataclasses import dataclass


@dataclass(frozen=True)
class FillMaskOutcome:
    """What a model predicted for a text, and what the view should warn about.

    Args:
        source: the model (preset name or folder) that predicted.
        result: the `kbert.inference.FillMaskResult`.
        fresh_heads: names of the model's heads that its preset did not provide
            (initialised at random); non-empty means the predictions are noise.
    """

    source: str
    result: object
    fresh_heads: tuple = ()

    @classmethod
    def compute(cls, models, source, text, top_k, targets=None):
        """Runs `BertMaskedLM.fill_mask` of `source` on `text`. Call in a worker.

        Args:
            models: the app's `ModelStore` (loads and caches the model).
            source: preset name or folder.
            text: the text, with at least one `[MASK]`.
            top_k: candidates per mask.
            targets: words to score instead of the whole vocabulary, or None.
        """
        model = models.model("BertMaskedLM", source)
        result = model.fill_mask(text, top_k=top_k, targets=list(targets) if targets else None)
        return cls(str(source), result, tuple(model.freshly_initialized_heads))
