"""The result of `saliency`: one score per word-piece of a text for one target."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class TokenSaliency:
    """How much each word-piece of a text (or text pair) matters to one label (or entity).

    Args:
        text: the caller's text.
        tokens: the `T` word-pieces of the text, then of the pair (the `[CLS]` and
            `[SEP]` the model adds are not scored).
        offsets: `T` `(start, end)` character offsets into `text`, or into `pair` for
            the pair's pieces.
        positions: `T` indices of the pieces in the encoded input (`[CLS]` is 0).
        scores: float32 array (T,). Positive: the piece supports the target.
            Occlusion: the drop of the target's probability when the piece alone
            is replaced by `[MASK]`. Gradient x input: the gradient of that
            probability with respect to the piece's token embedding, dotted with
            the embedding. Integrated gradients: the same gradient averaged along
            the straight path from the baseline, dotted with (embedding - baseline);
            the scores add up to `target_score - baseline_score`.
        method: "occlusion", "gradient_x_input" or "integrated_gradients".
        target: the label scored: a class of a classifier, or the entity type of a
            tagger's entity ("PER").
        target_span: `(start, end)` of the tagger's entity in `text`; None for a
            classifier.
        target_score: the target's probability for the text as it is (for an
            entity, the mean probability of its words' predicted tags, as
            `EntitySpan.score`).
        baseline_score: integrated gradients' target probability at the baseline;
            None for the other methods.
        steps: integrated gradients' number of points on the path; None otherwise.
        pair: a classifier's second text, or None.
        sequence_ids: `T` numbers, 0 for a piece of `text`, 1 for one of `pair`;
            () stands for all 0.
    """

    text: str
    tokens: tuple
    offsets: tuple
    positions: tuple
    scores: np.ndarray
    method: str
    target: str
    target_span: object
    target_score: float
    baseline_score: object = None
    steps: object = None
    pair: object = None
    sequence_ids: tuple = ()

    def sequence_of(self, index):
        """0 when piece `index` is of `text`, 1 when it is of `pair`."""
        return self.sequence_ids[index] if self.sequence_ids else 0

    def records(self):
        """One dict per piece: `token`, `start`, `end`, `score`, in text order; for a
        pair, also `sequence` (0: the text, 1: the pair, which `start`, `end` point into)."""
        records = []
        for index, (token, (start, end), score) in enumerate(
            zip(self.tokens, self.offsets, self.scores)
        ):
            record = {"token": token, "start": start, "end": end, "score": float(score)}
            if self.pair is not None:
                record["sequence"] = self.sequence_of(index)
            records.append(record)
        return records

    def as_dict(self):
        """Everything as plain JSON-ready data; the pieces under "tokens" (`records`)."""
        return {
            "text": self.text,
            **({} if self.pair is None else {"pair": self.pair}),
            "method": self.method,
            "target": self.target,
            "target_span": None if self.target_span is None else list(self.target_span),
            "target_score": self.target_score,
            "baseline_score": self.baseline_score,
            "steps": self.steps,
            "tokens": self.records(),
        }
