"""What the user asked the question-answering tab, copied off its widgets for a worker."""

from dataclasses import dataclass


@dataclass(frozen=True)
class AnswerRequest:
    """A question about a passage, and how to answer it.

    Attributes:
        source: the model (preset name or folder) to answer with.
        question: the question.
        passage: the passage, as the model reads it.
        top_k: how many answers to list.
        null_threshold: `answer`'s null threshold, or None while "no answer" is off.
        shade: whether to compute the start/end probabilities of every token.
        quiet: asked as the user types (the view then leaves their caret alone).
    """

    source: str
    question: str
    passage: str
    top_k: int
    null_threshold: object
    shade: bool
    quiet: bool = False
