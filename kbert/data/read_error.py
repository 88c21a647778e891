"""The `ValueError` a data reader raises for a problem at a known place in a file."""

from kbert.data.read_problem import ReadProblem

__all__ = ["ReadError"]


class ReadError(ValueError):
    """A reader's error that knows its `ReadProblem`, and whether it is one record's.

    Its message is the problem's. A record's problem (`record=True`) is what
    `errors="collect"` lists before reading on; any other (a missing column, bytes that
    are not UTF-8) stops the reading.

    Args:
        problem: the `ReadProblem`.
        record: whether the problem is one record's rather than the file's.

    Example:

    >>> error = ReadError.at("train.csv", 4, "empty label in column 'label'.")
    >>> isinstance(error, ValueError), error.problem.line, error.record
    (True, 4, True)
    """

    def __init__(self, problem, record=True):
        super().__init__(problem.message)
        self.problem = problem
        self.record = record

    @classmethod
    def at(cls, file, line, detail, record=True):
        """The error for `detail` on `line` of `file` (see `ReadProblem.at`)."""
        return cls(ReadProblem.at(file, line, detail), record)

    def __reduce__(self):
        # The arguments, not the message, rebuild it (in another process, say).
        return type(self), (self.problem, self.record)
