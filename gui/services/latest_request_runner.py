"""Type-as-you-go requests: a newer request supersedes a stale one."""

from PySide6.QtCore import QObject
from PySide6.QtCore import QTimer
from PySide6.QtCore import Signal
from PySide6.QtCore import Slot

from kbert_gui.services.worker import Worker
from kbert_gui.services.worker import describe_error

# The pause after a keystroke before a request that follows typing starts: long enough
# to skip the keystrokes of a word, short enough to feel live.
TYPING_DELAY_MS = 250


class LatestRequestRunner(QObject):
    """Runs the newest of a stream of requests on a `WorkerPool`, after a pause.

    `submit(function, *args)` (re)starts a debounce timer; when it fires, the
    request runs on the pool. A request that was superseded before it started is
    skipped, and the result of one superseded while it ran is dropped, so `result`
    only ever carries the answer to the latest request.

    Signals:
        result(object): the return value of the latest request.
        error(str): its error message.
        busy_changed(bool): True while a request is pending or running.

    Args:
        pool: the `WorkerPool` to run on (a serial one shares a model safely).
        delay_ms: the debounce pause; 0 runs at the next event-loop turn.
        parent: the owning QObject.
    """

    result = Signal(object)
    error = Signal(str)
    busy_changed = Signal(bool)

    def __init__(self, pool, delay_ms=TYPING_DELAY_MS, parent=None):
        super().__init__(parent)
        self._pool = pool
        self._generation = 0
        self._pending = None
        self._running = 0
        self._busy = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self._start_pending)

    @property
    def generation(self):
        """The number of the latest request."""
        return self._generation

    @property
    def busy(self):
        """True while a request is pending or running."""
        return self._busy

    def submit(self, function, *args, **kwargs):
        """Supersedes earlier requests with `function(*args, **kwargs)`."""
        self._generation += 1
        self._pending = (self._generation, function, args, kwargs)
        self._timer.start()
        self._set_busy(True)

    def cancel(self):
        """Forgets every request: nothing pending runs, no running result arrives."""
        self._generation += 1
        self._pending = None
        self._timer.stop()
        self._set_busy(self._running > 0)

    def _start_pending(self):
        if self._pending is None:
            return
        generation, function, args, kwargs = self._pending
        self._pending = None
        worker = Worker(self._run_if_current, generation, function, args, kwargs)
        worker.signals.result.connect(self._deliver)
        worker.signals.finished.connect(self._finished)
        self._running += 1
        self._pool.start(worker)

    def _run_if_current(self, worker, generation, function, args, kwargs):
        # Errors travel with their request's number: a superseded request's error is
        # as stale as its result.
        if generation != self._generation:
            return generation, None, None
        try:
            return generation, function(*args, **kwargs), None
        except Exception as error:
            return generation, None, describe_error(error)

    @Slot(object)
    def _deliver(self, tagged):
        generation, value, message = tagged
        if generation != self._generation:
            return
        if message is None:
            self.result.emit(value)
        else:
            self.error.emit(message)

    @Slot()
    def _finished(self):
        self._running -= 1
        self._set_busy(self._running > 0 or self._pending is not None)

    def _set_busy(self, busy):
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)
