"""One fill-mask prediction for the "Masked words" tab, computed in a worker."""

from dataclasses import dataclass

from kbert.model_table import class_with_verb
from kbert_gui.masked_words.masked_words_format import too_long_message


@dataclass(frozen=True)
class FillMaskOutcome:
    """What a model predicted for a text, and what the view should say about it.

    Args:
        source: the model (preset name or folder) that predicted.
        text: the text it predicted for.
        result: the `kbert.inference.FillMaskResult` (the vocabulary's top-k), or
            None when words were scored instead.
        word_scores: with "Score these words", a `kbert.inference.MaskWordScores`
            per mask; else ().
        fresh_heads: names of the model's heads that its preset did not provide
            (initialised at random); non-empty means the predictions are noise.
        num_tokens: the text's length in tokens, `[CLS]` and `[SEP]` included.
        limit: the most tokens the model reads; a longer text is cut to it.
    """

    source: str
    text: str
    result: object
    word_scores: tuple = ()
    fresh_heads: tuple = ()
    num_tokens: int = 0
    limit: int = 0

    @property
    def masks(self):
        """Per mask, an object with `start`, `end` and its rows (`candidates`: the
        vocabulary's `MaskPrediction`s, or `scores`: the named words' `WordScore`s)."""
        return self.result.masks if self.result is not None else self.word_scores

    @classmethod
    def compute(cls, models, source, text, top_k, targets=None):
        """Runs `BertMaskedLM.fill_mask` of `source` on `text`, or, with `targets`,
        `kbert.inference.score_words`. Call in a worker.

        Args:
            models: the app's `ModelStore` (loads and caches the model).
            source: preset name or folder.
            text: the text, with at least one `[MASK]`.
            top_k: candidates per mask.
            targets: words to score instead of the whole vocabulary, or None.

        Raises:
            ValueError: kbert's, or one saying how long the text is when the model's
                limit would cut off a mask (not the whole text, as kbert's does).
        """
        from kbert.inference import score_words
        from kbert.inference.model_io import sequence_limit

        model = models.model(class_with_verb("fill_mask").name, source)
        tokenizer = model.tokenizer
        limit = sequence_limit(model, tokenizer)
        tokens = tokenizer.tokenize(text)
        num_tokens = len(tokens) + 2
        if num_tokens > limit:
            kept = tokens[: limit - 2]
            total = tokens.count(tokenizer.mask_token)
            if kept.count(tokenizer.mask_token) < total:
                cut = total - kept.count(tokenizer.mask_token)
                raise ValueError(too_long_message(num_tokens, limit, cut, total))
        fresh = tuple(model.freshly_initialized_heads)
        if targets:
            scores = score_words(model, None, text, list(targets))
            return cls(str(source), text, None, scores, fresh, num_tokens, limit)
        result = model.fill_mask(text, top_k=top_k)
        return cls(str(source), text, result, (), fresh, num_tokens, limit)
