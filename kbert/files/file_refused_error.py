"""The error of a file that kbert will not read, and why."""


class FileRefusedError(ValueError):
    """A file refused before it was read: not a regular file, outside its folder, too large,
    or (JSON) nested too deeply.

    A `ValueError`, so the command line and the app report it as bad input. The message
    names the file.

    Attributes:
        path: the file, as it was asked for.
    """

    def __init__(self, path, reason):
        self.path = str(path)
        super().__init__(f"Refusing to read {self.path!r}: {reason}.")
