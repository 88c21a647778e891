"""`python -m kbert_gui`: the desktop app (as `kbert gui`).

`python -m` puts the working directory first on `sys.path`; started beside a folder
named `kbert` (the parent of a clone, say), the app would import that folder instead
of the installed package. The working directory is taken off the path before kbert
is imported: the app's modules come from where kbert_gui is installed.
"""

import os
import sys


def _without_working_directory(path):
    """`path` without the entries that name the working directory ("" included)."""
    here = os.path.realpath(os.getcwd())
    return [entry for entry in path if os.path.realpath(entry or ".") != here]


sys.path[:] = _without_working_directory(sys.path)

from kbert_gui.app import main  # noqa: E402 (after the path is made safe)

sys.exit(main())
