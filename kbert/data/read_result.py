"""What a data reader returns with `errors="collect"`: the good examples and every problem."""

import dataclasses

__all__ = ["ReadResult"]


@dataclasses.dataclass(frozen=True)
class ReadResult:
    """The examples a reader accepted and the problems it found, both in file order.

    A problem with one record (an empty label, a malformed tag, an answer not in its
    context) leaves that record out and is listed; the reading goes on. A problem with the
    file as a whole (missing or refused, not UTF-8, a missing column, no records) is the
    only problem, with no examples. The list holds at most
    `kbert.data.problem_collector.MAX_PROBLEMS` problems; a file with more gets one last
    entry (line None) saying how many more there are.

    Attributes:
        examples: tuple of the reader's examples, those without problems.
        problems: tuple of `ReadProblem(file, line, message)`.

    Example:

    >>> result = read_classification("train.csv", errors="collect")
    >>> len(result.examples), [problem.line for problem in result.problems]
    (97, [4, 7, 9])
    """

    examples: tuple
    problems: tuple = ()

    @property
    def ok(self):
        """Whether the file has no problems."""
        return not self.problems
