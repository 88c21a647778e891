"""What the readers share to report problems: raise the first, or collect them all.

Each reader makes one `ProblemCollector` from its `errors` argument, hands it every
record's problem (`add`), and returns through it (`read`): with `errors="raise"` the first
problem is raised as it always was; with `errors="collect"` the records with problems are
left out, the problems listed, and the reading goes on to the end of the file.
"""

from kbert.data.read_error import ReadError
from kbert.data.read_problem import ReadProblem
from kbert.data.read_result import ReadResult

__all__ = ["ERRORS", "MAX_PROBLEMS", "ProblemCollector"]

# The values of the readers' `errors` argument.
ERRORS = ("raise", "collect")
# Problems listed at most: a file with more has more to fix than a list helps with, and
# the cap bounds the memory a hostile file can make a reader spend on messages.
MAX_PROBLEMS = 1000


class ProblemCollector:
    """Raises or lists the problems of one reading of one file.

    Args:
        path: the file being read.
        errors: "raise" (stop at the first problem) or "collect" (list them all).

    Raises:
        ValueError: for any other `errors`.

    Example:

    >>> collector = ProblemCollector("train.csv", "collect")
    >>> collector.add(ReadError.at("train.csv", 4, "empty label in column 'label'."))
    >>> collector.read(lambda: ["an example"]).problems[0].line
    4
    """

    def __init__(self, path, errors):
        if errors not in ERRORS:
            raise ValueError(f"`errors` must be 'raise' or 'collect'. Received: errors={errors!r}")
        self.path = str(path)
        self.collecting = errors == "collect"
        self._problems = []
        self._unlisted = 0

    @property
    def count(self):
        """How many record problems were found so far (listed or not)."""
        return len(self._problems) + self._unlisted

    def add(self, error):
        """Lists the `ReadError` of a record when collecting; raises it otherwise.

        A problem that is not a record's (`error.record` False) is always raised: it ends
        the reading.
        """
        if not (self.collecting and error.record):
            raise error
        if len(self._problems) < MAX_PROBLEMS:
            self._problems.append(error.problem)
        else:
            self._unlisted += 1

    def read(self, read_examples):
        """Runs `read_examples()` (which calls `add`) and returns what the reader returns.

        Returns:
            with "raise", what `read_examples` returns (the list of examples); with
            "collect", a `ReadResult`: the examples and the listed problems, or, when
            `read_examples` raised a `ValueError` (a problem that is not one record's),
            no examples and that problem alone.
        """
        if not self.collecting:
            return read_examples()
        try:
            examples = read_examples()
        except ValueError as error:
            if isinstance(error, ReadError):
                return ReadResult((), (error.problem,))
            return ReadResult((), (ReadProblem(self.path, None, str(error)),))
        problems = tuple(self._problems)
        if self._unlisted:
            more = (
                f"{self._unlisted} more problems are not listed (a reader lists at most "
                f"{MAX_PROBLEMS})."
            )
            problems += (ReadProblem.at(self.path, None, more),)
        return ReadResult(tuple(examples), problems)
