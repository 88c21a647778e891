"""One line for a path that is a symbolic link leading nowhere: a loop, or a dangling link."""

import errno
import os


def broken_link_message(path):
    """Why the link `path` leads nowhere, or None when it is not a broken link."""
    if not os.path.islink(path):
        return None
    try:
        os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return (
                f"No model at {str(path)!r}: it is a symbolic link loop (following it leads "
                "back to a link on the way); point it at the model folder."
            )
        return (
            f"No model at {str(path)!r}: it is a symbolic link to {os.readlink(path)!r}, "
            "which does not exist."
        )
    return None
