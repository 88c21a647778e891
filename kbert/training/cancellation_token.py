"""Cooperative cancellation of long work (fine-tuning) from another thread."""

import threading


class CancellationToken:
    """A flag another thread (a GUI's Cancel button, a signal handler) can raise.

    Long-running kbert work checks it between steps and stops cleanly: fine-tuning
    finishes the current batch, writes a training checkpoint and returns a result
    marked cancelled. A `threading.Event` works wherever a token is accepted.

    Example:

    >>> token = CancellationToken()
    >>> token.cancel()
    >>> token.is_set()
    True
    """

    def __init__(self):
        self._event = threading.Event()

    def cancel(self):
        """Asks the work to stop at its next check."""
        self._event.set()

    def is_set(self):
        """Whether cancellation was asked for (the `threading.Event` spelling)."""
        return self._event.is_set()

    @property
    def cancelled(self):
        return self._event.is_set()
