"""The error of an output folder that another writer holds."""

import errno


class OutputLockedError(OSError):
    """Another process (or thread) is writing to the same output folder.

    An `OSError` (errno EBUSY) whose message names the folder and the holder's process
    id, so the user can tell which run to wait for or stop.

    Attributes:
        folder: the output folder.
        holder_pid: the process id recorded by the holder, or None when unreadable.
    """

    def __init__(self, folder, holder_pid, detail=""):
        self.folder = str(folder)
        self.holder_pid = holder_pid
        holder = f"process {holder_pid}" if holder_pid is not None else "another process"
        message = (
            f"{self.folder!r} is being written by {holder}{detail}; wait for it to finish "
            "or stop it, or choose another output"
        )
        super().__init__(errno.EBUSY, message)

    def __str__(self):
        return self.strerror
