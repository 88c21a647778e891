"""Threads for background work, and the bookkeeping to stop them cleanly."""

from PySide6.QtCore import QObject
from PySide6.QtCore import QThreadPool


class WorkerPool(QObject):
    """A `QThreadPool` that keeps its `Worker`s alive until they finish.

    `max_threads=1` makes a serial queue: the app runs all inference on one such
    pool so that a model is never called from two threads at once, and training on
    another so that predictions stay responsive while a model trains.

    Args:
        max_threads: threads of the pool.
        parent: the owning QObject.
    """

    def __init__(self, max_threads=1, parent=None):
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)
        self._workers = set()

    def start(self, worker):
        """Queues `worker`; returns it (its `signals` are connected by the caller)."""
        self._workers = {known for known in self._workers if not known.is_done()}
        self._workers.add(worker)
        self._pool.start(worker)
        return worker

    @property
    def active_workers(self):
        """Workers queued or running."""
        return [worker for worker in self._workers if not worker.is_done()]

    def cancel_all(self):
        """Asks every queued or running worker to stop; queued ones are dropped."""
        for worker in list(self._workers):
            worker.cancel()
            if self._pool.tryTake(worker):
                self._workers.discard(worker)

    def wait_for_done(self, timeout_ms=-1):
        """Blocks until every worker has finished; True if they did in time."""
        return self._pool.waitForDone(timeout_ms)
