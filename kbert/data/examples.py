"""Records produced by the readers: one small frozen dataclass per kind of example."""

import dataclasses

__all__ = [
    "ClassificationExample",
    "GoldAnswer",
    "MultipleChoiceExample",
    "QAExample",
    "TokenClassificationExample",
]


@dataclasses.dataclass(frozen=True)
class ClassificationExample:
    """One text (or text pair) to classify.

    Attributes:
        text: the text, or the first text of a pair.
        pair: the second text of a pair, or None.
        label: the gold label as a string (integer labels come back as "0", "1", ...; see
            `classification_label_names` for numeric ordering), or None for unlabelled data.
        line: the 1-based line of the file where the record starts.
    """

    text: str
    pair: str | None
    label: str | None
    line: int


@dataclasses.dataclass(frozen=True)
class MultipleChoiceExample:
    """A context and its candidate endings (SWAG).

    Attributes:
        context: the context (SWAG's `sent1`), the first segment of every pair.
        endings: the candidate endings, each the second segment of one pair.
        label: the index of the right ending, or None for unlabelled data.
        line: the 1-based line of the file where the record starts.
    """

    context: str
    endings: tuple[str, ...]
    label: int | None
    line: int


@dataclasses.dataclass(frozen=True)
class TokenClassificationExample:
    """One sentence of whitespace-split tokens with one tag per token.

    Attributes:
        tokens: the words of the sentence.
        tags: one tag per word, e.g. "B-PER", "I-PER", "O".
        line: the 1-based line of the file where the sentence starts.
        token_lines: the line of each token (empty when not read from a file), so that
            an error about one tag can name its own line. Left out of `repr`, which
            identifies the training data of a resumable run.
    """

    tokens: list[str]
    tags: list[str]
    line: int
    token_lines: tuple[int, ...] = dataclasses.field(default=(), repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class GoldAnswer:
    """A gold answer: its text and the character offset where it starts in the context.

    Attributes:
        text: the answer text, `context[start:end]`.
        start: offset of the first character in the context.
    """

    text: str
    start: int

    @property
    def end(self):
        """Offset one past the answer's last character."""
        return self.start + len(self.text)


@dataclasses.dataclass(frozen=True)
class QAExample:
    """One extractive question about a context.

    Attributes:
        id: the question id, unique within a file.
        title: the title of the article the context comes from ("" if none).
        question: the question text.
        context: the paragraph that holds the answer.
        answers: the gold answers (several in dev sets; empty when `is_impossible`).
        is_impossible: True for a SQuAD 2.0 question that the context does not answer.
    """

    id: str
    title: str
    question: str
    context: str
    answers: tuple[GoldAnswer, ...]
    is_impossible: bool
