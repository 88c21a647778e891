"""Python's cyclic garbage collector, run on the UI thread only."""

import contextlib
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
    but at most every `full_interval_s`. Reference counting frees everything outside
    cycles at once, as always.

    A pass costs time in proportion to the objects it looks at, and importing Keras
    and its backend leaves ~420,000 of them (a full pass over them took 170-235 ms on
    the 2-core machine, a first generation-1 pass 220 ms, each a frozen window). They
    live as long as the app: run the imports inside `long_lived_imports()`, which holds
    the passes meanwhile and then moves everything alive into the permanent generation
    (`gc.freeze()`), where no pass looks again. A full pass with the demo model loaded
    then takes 9-26 ms.

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
        if generation is None or _imports_in_progress:
            return None
        gc.collect(generation)
        self.collections[generation] += 1
        if generation == 2:
            self._last_full = time.monotonic()
        return generation


_imports_in_progress = 0
_frozen = False  # whether a `long_lived_imports` block has frozen the heap
_imports_lock = threading.Lock()


@contextlib.contextmanager
def long_lived_imports():
    """Holds the collector's passes while the block runs, then freezes what is alive.

    For importing what lives as long as the process (Keras, the backend), from any
    thread: while inside, `MainThreadGarbageCollector.check` runs no pass (one would
    look at every object the imports have made so far); on leaving the first such
    block of the process, `gc.freeze()` moves every object alive into the permanent
    generation, which no later pass looks at. The price: what is alive or in a cycle at
    that moment and dies later is never collected; imported modules do not die. Later
    blocks freeze nothing (their imports are done), so that cost is paid once.
    """
    global _imports_in_progress, _frozen
    with _imports_lock:
        _imports_in_progress += 1
    try:
        yield
    finally:
        with _imports_lock:
            if not _frozen:
                gc.freeze()
                _frozen = True
            _imports_in_progress -= 1
