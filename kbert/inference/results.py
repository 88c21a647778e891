"""Typed inference results. Character offsets always point into the caller's string.

`start` and `end` are `[start, end)` Python string indices: `text[start:end]` is the
span, whatever lower-casing, accent stripping or whitespace normalisation the
tokenizer applied internally.
"""

from dataclasses import dataclass

import numpy as np

from kbert.tokenizer.bert_tokenizer import display_token


@dataclass(frozen=True)
class MaskPrediction:
    """One candidate token for one `[MASK]`.

    Args:
        token: the vocabulary entry (a continuation piece keeps its `##`).
        token_id: its id.
        probability: softmax probability over the whole vocabulary at this mask.
        text: the caller's text with this `[MASK]` replaced by the token (without
            `##`). Other masks stay as they are, except with `joint=True`, where
            they hold their chosen tokens.
    """

    token: str
    token_id: int
    probability: float
    text: str


@dataclass(frozen=True)
class MaskFill:
    """The candidates for one `[MASK]` of a text.

    Args:
        position: index of the `[MASK]` token in the encoded input (`[CLS]` is 0).
        start: character offset where `[MASK]` starts in the caller's text.
        end: character offset where it ends: `text[start:end] == "[MASK]"`.
        candidates: tuple of `MaskPrediction`, most probable first.
    """

    position: int
    start: int
    end: int
    candidates: tuple


@dataclass(frozen=True)
class FillMaskResult:
    """Everything `fill_mask` found for one text.

    Args:
        text: the caller's text.
        masks: tuple of `MaskFill`, in text order.
    """

    text: str
    masks: tuple

    @property
    def filled_text(self):
        """The text with every `[MASK]` replaced by its most probable candidate."""
        return substitute_spans(
            self.text,
            [(mask.start, mask.end) for mask in self.masks],
            [display_token(mask.candidates[0].token) for mask in self.masks],
        )


@dataclass(frozen=True)
class WordScore:
    """How probable one given word is at one `[MASK]`, however many pieces it has.

    Args:
        word: the word as given.
        pieces: the word pieces the tokenizer makes of it (a lower-casing tokenizer
            makes the same pieces of "Paris" and "paris").
        probability: the product of its pieces' probabilities, each given the pieces
            before it (see `score_words`); None when it cannot be scored (`reason`).
        text: the caller's text with this `[MASK]` replaced by the word.
        reason: why `probability` is None; "" when it is not.
    """

    word: str
    pieces: tuple
    probability: object
    text: str
    reason: str = ""


@dataclass(frozen=True)
class MaskWordScores:
    """The given words' scores at one `[MASK]` of a text.

    Args:
        position: index of the `[MASK]` token in the encoded input (`[CLS]` is 0).
        start: character offset where `[MASK]` starts in the caller's text.
        end: character offset where it ends: `text[start:end] == "[MASK]"`.
        scores: tuple of `WordScore`, in the order the words were given.
    """

    position: int
    start: int
    end: int
    scores: tuple


@dataclass(frozen=True)
class AnswerSpan:
    """One predicted answer span: `context[start:end] == text`, always.

    Args:
        text: the answer, an exact substring of the context.
        start: character offset of the answer in the context.
        end: character offset of its end (exclusive).
        score: start logit + end logit, the ranking score of BERT's SQuAD code.
        probability: softmax of `score` over every valid span of every window.
        start_probability: softmax of the start logits over the window's tokens,
            at the answer's first token.
        end_probability: the same for the end logits at its last token.
        window: index of the window (see `kbert.data.qa_windows`) it came from.
    """

    text: str
    start: int
    end: int
    score: float
    probability: float
    start_probability: float
    end_probability: float
    window: int


@dataclass(frozen=True)
class AnswerResult:
    """The answers to one question about one context.

    Args:
        question: the caller's question.
        context: the caller's context.
        answers: tuple of `AnswerSpan`, best first; empty when `is_impossible`.
        no_answer_score: the "no answer" score of SQuAD 2.0 models, the smallest
            `start_logit + end_logit` at `[CLS]` over the windows; None when the
            context is empty (no window, no model call).
        is_impossible: True when the context is empty, or when `null_threshold`
            was given and `no_answer_score - best span score > null_threshold`.
        head_trained: False when the model's span head was freshly initialised (not in
            its preset): the answers are then noise until it is fine-tuned.
    """

    question: str
    context: str
    answers: tuple
    no_answer_score: object
    is_impossible: bool
    head_trained: bool = True


@dataclass(frozen=True)
class Classification:
    """The label probabilities for one text (or text pair).

    Args:
        label: the most probable label.
        probability: its probability.
        probabilities: dict `label -> probability` for every label, in class order.
    """

    label: str
    probability: float
    probabilities: dict


@dataclass(frozen=True)
class Choice:
    """The ending `choose` picks for a context, with a probability for every ending.

    Args:
        index: the position of the most probable ending in `endings`.
        ending: that ending's text.
        probability: its probability.
        probabilities: one probability per ending, in the order given; they sum to 1.
        endings: the endings, as given.
    """

    index: int
    ending: str
    probability: float
    probabilities: tuple
    endings: tuple


@dataclass(frozen=True)
class EntitySpan:
    """One entity found by `tag`: `text[start:end] == span.text`.

    Args:
        label: the entity type, without its `B-`/`I-`/`E-`/`S-` prefix ("PER").
        start: character offset of the entity in the caller's text.
        end: character offset of its end (exclusive).
        text: the entity as it appears in the caller's text.
        score: mean probability of the predicted labels of the entity's words.
    """

    label: str
    start: int
    end: int
    text: str
    score: float


@dataclass(frozen=True, eq=False)
class TokenEmbeddings:
    """The feature vector of every token of one text (or text pair), from `embed`.

    Args:
        text: the caller's text.
        pair: the second text of a pair, or None.
        tokens: the `L` token strings, `[CLS]` first and `[SEP]` last; padding is
            not included, and a text longer than the model's limit keeps the tokens
            that fitted.
        offsets: `L` `(start, end)` character offsets: into `text` where
            `sequence_ids` is 0, into `pair` where it is 1; `(0, 0)` for the
            `[CLS]` and `[SEP]` added by segment packing.
        sequence_ids: `L` ints: 0 for tokens of `text`, 1 for tokens of `pair`, -1
            for the added `[CLS]` and `[SEP]`.
        vectors: float32 array (L, D), one row per token (D is the hidden size,
            times the number of layers when they are concatenated).
    """

    text: str
    pair: object
    tokens: tuple
    offsets: tuple
    sequence_ids: tuple
    vectors: np.ndarray


def substitute_spans(text, spans, replacements):
    """`text` with each `[start, end)` span (sorted, disjoint) replaced."""
    pieces = []
    cursor = 0
    for (start, end), replacement in zip(spans, replacements):
        pieces.append(text[cursor:start])
        pieces.append(replacement)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)
