"""kbert's log lines of one piece of background work, for a progress line in the window."""

import contextlib
import logging
import threading


class ThreadLogHandler(logging.Handler):
    """Hands the records a logger gets on each thread to that thread's captures.

    kbert logs the steps of long operations (a checkpoint converted, data read, a preset
    written) on its `kbert.*` loggers; while a worker loads a model or trains, the
    window shows those lines (`deliver` is typically a Qt signal's `emit`, which queues
    them to the UI thread). Lines other threads log at the same time (a training run's,
    while the "Classify" tab predicts) are not the work's and are left out.

    One handler per logger is installed, the first time something captures it, and
    stays: captures come and go in a table the handler reads, never in the logger's
    list of handlers. (Python's logging walks that list without a lock, so a handler
    another thread removes mid-walk makes the walk skip the next one: a run's lines
    would go missing from its log whenever a prediction in another tab ended.)

    Use `ThreadLogHandler.capture(deliver)` around the work.
    """

    _lock = threading.Lock()
    _installed = {}  # logger name -> its handler

    def __init__(self, logger):
        super().__init__(logging.NOTSET)
        self._logger = logger
        self._captures = {}  # thread id -> tuple of (deliver, level, convert)
        self._level_before = None  # the logger's own level, while captures lowered it

    def emit(self, record):
        for deliver, level, convert in self._captures.get(record.thread, ()):
            if record.levelno < level:
                continue
            try:
                deliver(convert(record))
            except Exception:  # a log line must never break the work it describes
                self.handleError(record)

    @classmethod
    @contextlib.contextmanager
    def capture(cls, deliver, logger_name="kbert", level=logging.INFO, convert=None):
        """Within the block, this thread's records of `logger_name` at `level` and above
        go to `deliver(convert(record))` (by default `deliver(message)`, a str).

        While any capture wants a lower level than the logger's, the logger's level is
        lowered to it (with no other handler that prints nothing more: Python's fallback
        handler shows warnings only); the level comes back when the last capture ends.

        Example:

        >>> lines = []
        >>> with ThreadLogHandler.capture(lines.append):
        ...     logging.getLogger("kbert.data").info("Read %d examples", 32)
        >>> lines
        ['Read 32 examples']
        """
        entry = (deliver, level, convert or logging.LogRecord.getMessage)
        thread = threading.get_ident()
        with cls._lock:
            handler = cls._installed.get(logger_name)
            if handler is None:
                handler = cls._installed[logger_name] = cls(logging.getLogger(logger_name))
                handler._logger.addHandler(handler)
            handler._captures[thread] = handler._captures.get(thread, ()) + (entry,)
            handler._set_level()
        try:
            yield handler
        finally:
            with cls._lock:
                left = tuple(item for item in handler._captures.get(thread, ()) if item is not entry)
                if left:
                    handler._captures[thread] = left
                else:
                    handler._captures.pop(thread, None)
                handler._set_level()

    def _set_level(self):
        """The logger's level for the captures now open (called under the lock)."""
        logger = self._logger
        own = logger.level if self._level_before is None else self._level_before
        # The level as it would be without captures; set once, never passing through a
        # higher level on the way (other threads log meanwhile).
        effective = own or (logger.parent.getEffectiveLevel() if logger.parent else 0)
        levels = [level for entries in self._captures.values() for _, level, _ in entries]
        if levels and effective > min(levels):
            self._level_before, target = own, min(levels)
        else:
            self._level_before, target = None, own
        if logger.level != target:
            logger.setLevel(target)
