"""One run at a time per output folder: a decorator for the training runs' `run` methods."""

import functools

from kbert.files.output_lock import OutputLock


def exclusive_output(run):
    """Decorates a run method of an object with `output_dir` and `checkpoint`.

    The run holds its output folder's `kbert.files.OutputLock` from start to end, so a
    second run (or a `--resume`) on the same folder fails at once with an
    `OutputLockedError` naming the first one's process id, instead of both writing one
    model and one checkpoint. Before it starts, temporaries of the training checkpoint
    left by a killed run are deleted (`checkpoint.remove_stale_files()`).
    """

    @functools.wraps(run)
    def locked_run(self, *args, **kwargs):
        with OutputLock(self.output_dir):
            self.checkpoint.remove_stale_files()
            return run(self, *args, **kwargs)

    return locked_run
