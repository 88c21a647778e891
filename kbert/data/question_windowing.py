"""How a long QA context is cut into windows: window length, stride, question length."""

import dataclasses

from kbert.argument_checks import check_integer

# The fewest tokens a window can have: [CLS] question [SEP] context [SEP], with one
# question token and one context token.
MIN_WINDOW_LENGTH = 5


@dataclasses.dataclass(frozen=True)
class QuestionWindowing:
    """The settings of `make_qa_windows`, as BERT's `run_squad.py` names them.

    One value passed wherever a context is windowed (`answer`, `span_probabilities`,
    `QuestionAnswererPreprocessor`, `QuestionAnsweringRecipe`, `kbert qa`), so every
    reader of a context cuts it the same way.

    Args:
        max_length: tokens per window, special tokens included (at least 5). None:
            as many as the model takes (the preprocessor's `sequence_length`, the
            fine-tuning run's `max_length`); see `capped`.
        doc_stride: context tokens between the starts of consecutive windows (the
            step between window starts, not the overlap).
        max_question_length: a question with more tokens is truncated to this many,
            with a warning; None never truncates.

    Examples:

    >>> QuestionWindowing(doc_stride=64).capped(128)
    QuestionWindowing(max_length=128, doc_stride=64, max_question_length=64)
    >>> QuestionWindowing(max_length=None).capped(512).max_length
    512
    """

    max_length: int | None = 384
    doc_stride: int = 128
    max_question_length: int | None = 64

    def __post_init__(self):
        minimums = {"max_length": MIN_WINDOW_LENGTH, "doc_stride": 1, "max_question_length": 1}
        for name, minimum in minimums.items():
            value = getattr(self, name)
            if value is not None or name == "doc_stride":
                # Stored as Python ints, so equal settings compare and print alike.
                object.__setattr__(self, name, check_integer(name, value, minimum))

    def capped(self, limit):
        """These settings with windows at most `limit` tokens long (the model's limit).

        Args:
            limit: the longest sequence the model (or preprocessor) takes.

        Returns:
            A `QuestionWindowing` whose `max_length` is `min(max_length, limit)`, or
            `limit` when `max_length` is None.
        """
        limit = check_integer("limit", limit, 1)
        # A limit below MIN_WINDOW_LENGTH fails the check of `max_length`.
        length = limit if self.max_length is None else min(self.max_length, limit)
        return dataclasses.replace(self, max_length=length)
