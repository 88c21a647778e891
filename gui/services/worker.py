"""One piece of background work that talks to the UI only through signals."""

import logging
import threading
import traceback

from PySide6.QtCore import QObject
from PySide6.QtCore import QRunnable
from PySide6.QtCore import Signal

logger = logging.getLogger("gui")


class WorkerSignals(QObject):
    """What a `Worker` tells the UI thread (queued across threads by Qt).

    `started` when the work begins; `progress(value)` as often as the work reports;
    then exactly one of `result(value)`, `error(message)` or `cancelled()`; and
    `finished` last, always.
    """

    started = Signal()
    progress = Signal(object)
    result = Signal(object)
    error = Signal(str)
    cancelled = Signal()
    finished = Signal()


class Worker(QRunnable):
    """Runs `function(worker, *args, **kwargs)` on a pool thread (see `WorkerPool`).

    The function receives the worker itself so it can `report(value)` progress and
    check `is_cancelled()` between steps (or hand `worker.cancellation`, a
    `threading.Event`, to kbert's `FineTuner`/`PretrainingLoop`). Cancellation is
    cooperative: `cancel()` raises the flag and the work stops at its next check;
    nothing is ever terminated.

    An exception in the function becomes `error(message)`: a `ValueError` (bad input,
    which kbert explains in its message) is shown as is, anything else with its type,
    and the traceback goes to the log.

    Example:

    >>> worker = Worker(lambda worker, text: text.upper(), "hi")
    >>> worker.signals.result.connect(print)
    >>> pool.start(worker)
    """

    def __init__(self, function, *args, **kwargs):
        super().__init__()
        self.setAutoDelete(False)
        self.signals = WorkerSignals()
        self.cancellation = threading.Event()
        self._function = function
        self._args = args
        self._kwargs = kwargs
        self._done = threading.Event()

    def report(self, value):
        """Sends `value` to the UI thread as `progress(value)`."""
        self.signals.progress.emit(value)

    def cancel(self):
        """Asks the work to stop at its next check."""
        self.cancellation.set()

    def is_cancelled(self):
        return self.cancellation.is_set()

    def is_done(self):
        """True once `run` has returned (after `finished` was emitted)."""
        return self._done.is_set()

    def wait(self, timeout=None):
        """Blocks until `run` has returned; True if it did within `timeout` seconds."""
        return self._done.wait(timeout)

    def run(self):
        try:
            self._run_and_report()
        except RuntimeError as error:
            # Qt deleted the signals' object with the UI that owned the work (the window
            # closed, the application ended) before the work could report: nobody is
            # left to tell, so the work ends quietly instead of raising on a pool thread.
            if not _is_deleted_signal_source(error):
                raise
            self.cancellation.set()
            logger.debug("Background work outlived its UI: %s", error)
        finally:
            self._done.set()

    def _run_and_report(self):
        signals = self.signals
        signals.started.emit()
        try:
            value = self._function(self, *self._args, **self._kwargs)
        except Exception as error:  # reported to the user, never swallowed
            if _is_deleted_signal_source(error):
                raise
            logger.debug("Background work failed:\n%s", traceback.format_exc())
            signals.error.emit(describe_error(error))
        else:
            if self.is_cancelled():
                signals.cancelled.emit()
            else:
                signals.result.emit(value)
        signals.finished.emit()


def _is_deleted_signal_source(error):
    """True for the error PySide6 raises when a signal's QObject no longer exists."""
    return isinstance(error, RuntimeError) and "Signal source has been deleted" in str(error)


def describe_error(error):
    """A one-line message for the user: kbert's `ValueError`s already say what to fix."""
    message = str(error).strip() or "no details"
    if isinstance(error, ValueError):
        return message
    if isinstance(error, OSError) and error.filename:
        return f"{error.strerror or message}: {error.filename}"
    return f"{type(error).__name__}: {message}"
