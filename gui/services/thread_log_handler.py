"""kbert's log lines of one piece of background work, for a progress line in the window."""

import contextlib
import logging
import threading


class ThreadLogHandler(logging.Handler):
    """Passes the messages a logger records on one thread to `deliver(message)`.

    kbert logs the steps of long operations (a checkpoint converted, a download, a
    preset written) on its `kbert.*` loggers; while a worker loads a model, this
    handler on the "kbert" logger hands those lines to the window (`deliver` is a Qt
    signal's `emit`, which queues them to the UI thread). Lines other threads log at
    the same time (a training run's) are not the load's and are left out.

    Use `ThreadLogHandler.capture(deliver)` around the work.

    Args:
        deliver: called with each message (a str), on the logging thread.
        thread_id: the thread whose records count (default: the current one).
        level: the least level passed on.
    """

    def __init__(self, deliver, thread_id=None, level=logging.INFO):
        super().__init__(level)
        self._deliver = deliver
        self._thread_id = threading.get_ident() if thread_id is None else thread_id

    def emit(self, record):
        if record.thread != self._thread_id:
            return
        try:
            self._deliver(record.getMessage())
        except Exception:  # a log line must never break the work it describes
            self.handleError(record)

    @classmethod
    @contextlib.contextmanager
    def capture(cls, deliver, logger_name="kbert", level=logging.INFO):
        """Within the block, this thread's lines of `logger_name` at `level` and above go
        to `deliver` (the logger's level is lowered to `level` if it was higher; with no
        other handler that prints nothing more, since Python's fallback handler shows
        warnings only)."""
        logger = logging.getLogger(logger_name)
        if logger.getEffectiveLevel() > level:
            logger.setLevel(level)
        handler = cls(deliver, level=level)
        logger.addHandler(handler)
        try:
            yield handler
        finally:
            logger.removeHandler(handler)
