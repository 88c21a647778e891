"""The error of a file that kbert will not read, and why."""


class FileRefusedError(ValueError):
    """A file refused before it was read (or written): not a regular file, outside its
    folder, a link, too large, or (JSON) nested too deeply.

    A `ValueError`, so the command line and the app report it as bad input. The message
    names the file.

    Attributes:
        path: the file, as it was asked for.
        action: what was refused, "read" or "write".
    """

    def __init__(self, path, reason, action="read"):
        self.path = str(path)
        super().__init__(f"Refusing to {action} {self.path!r}: {reason}.")
