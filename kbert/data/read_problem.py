"""One problem a data reader found in a file: where it is and what the reader says."""

import dataclasses

__all__ = ["ReadProblem"]


@dataclasses.dataclass(frozen=True)
class ReadProblem:
    """A problem with a data file, as the readers' `errors="collect"` list it.

    Attributes:
        file: the file, as the reader was given it.
        line: the 1-based line where the problem's record starts (or the line the problem
            is on), or None where the file has no such line (SQuAD's JSON, which names
            the question's place in the document instead, or "no records found").
        message: the reader's whole message, as `errors="raise"` raises it: it starts with
            the file (and line), e.g. "train.csv:4: empty label in column 'label'.".

    Example:

    >>> problem = ReadProblem.at("train.csv", 4, "empty label in column 'label'.")
    >>> problem.line, str(problem)
    (4, "train.csv:4: empty label in column 'label'.")
    """

    file: str
    line: int | None
    message: str

    @classmethod
    def at(cls, file, line, detail):
        """The problem `detail` on `line` of `file` (None: the file as a whole), its
        message prefixed "file:line: " (or "file: ")."""
        where = str(file) if line is None else f"{file}:{line}"
        return cls(str(file), line, f"{where}: {detail}")

    def __str__(self):
        return self.message
