"""Python's cyclic garbage collector, run on the UI thread only."""

import gc
import threading
import time

from PySide6.QtCore import QObject
from PySide6.QtCore import QTimer


class MainThreadGarbageCollector(QObject):
    """Runs the cyclic garbage collector from a timer on the UI thread, never elsewhere.

    Left automatic, the collector runs in whichever thread happens to allocate, often a
    worker reading weights or training. A pass there frees the Qt objects of closed
    widgets caught in reference cycles; PySide hands their deletion back to the UI
    thread, which then crashed mid-paint (PySide 6.11: a segmentation fault in
    `BindingManager::runDeletionInMainThread`). So while this object is active the
    automatic collector is off (`gc.disable()`) and a `QTimer` on the UI thread runs
    the generations CPython would have run, from the same counts and thresholds:
    generation 0 past its threshold, 1 past its own, and a full pass (2) past its own
    but at most every `full_interval_s`, as a full pass over Keras' heap can take
    a second. Reference counting frees everything outside cycles at once, as always.

    Args:
        interval_ms: how often the counts are checked.
        full_interval_s: the least time between two full passes.
        parent: the owning QObject.

    Example:

    >>> collector = MainThreadGarbageCollector(parent=app)
    >>> collector.start()   # as the app starts; stop() restores the automatic collector
    """

    def __init__(self, interval_ms=250, full_interval_s=30.0, parent=None):
        super().__init__(parent)
        self.full_interval_s = full_interval_s
        self.collections = [0, 0, 0]  # passes run, per generation
        self._thread = threading.get_ident()
        self._was_enabled = None
        self._last_full = time.monotonic()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)

    @property
    def active(self):
        return self._was_enabled is not None

    def start(self):
        """Turns the automatic collector off and starts checking on this (the UI) thread."""
        if not self.active:
            self._was_enabled = gc.isenabled()
            gc.disable()
            self._timer.start()

    def stop(self):
        """Stops checking, collects once and gives the collector back as it was."""
        if self.active:
            self._timer.stop()
            gc.collect()
            if self._was_enabled:
                gc.enable()
            self._was_enabled = None

    def check(self):
        """Runs the generation whose count is past its threshold, if any; returns it or None."""
        if threading.get_ident() != self._thread:
            raise RuntimeError("MainThreadGarbageCollector.check runs on the UI thread only")
        counts = gc.get_count()
        thresholds = gc.get_threshold()
        generation = None
        for level in range(3):
            if counts[level] > thresholds[level] > 0:
                generation = level
        if generation == 2 and time.monotonic() - self._last_full < self.full_interval_s:
            generation = 1
        if generation is None:
            return None
        gc.collect(generation)
        self.collections[generation] += 1
        if generation == 2:
            self._last_full = time.monotonic()
        return generation
