"""The app collects garbage on the UI thread only (a worker's pass crashed PySide)."""

import gc
import threading
import weakref

import pytest

from kbert_gui.main_thread_garbage_collector import MainThreadGarbageCollector


class _Cycle:
    def __init__(self):
        self.itself = self


@pytest.fixture
def passes():
    """The thread of every collector pass started while the test runs."""
    threads = []

    def record(phase, info):
        if phase == "start":
            threads.append(threading.get_ident())

    gc.callbacks.append(record)
    yield threads
    gc.callbacks.remove(record)


def test_no_pass_runs_in_a_worker_and_the_ui_thread_frees_its_cycles(qapp, passes):
    collector = MainThreadGarbageCollector()
    # The test session's own collector (tests/conftest.py) is running; use a fresh one.
    outer = gc.isenabled()
    gc.enable()
    try:
        collector.start()
        assert not gc.isenabled()
        passes.clear()
        freed = []

        def allocate():
            for _ in range(50_000):  # far past generation 0's threshold
                _Cycle()
            cycle = _Cycle()
            freed.append(weakref.ref(cycle))

        worker = threading.Thread(target=allocate)
        worker.start()
        worker.join()
        assert passes == []  # the worker ran no pass
        assert freed[0]() is not None  # its garbage waits for the UI thread
        generation = collector.check()
        assert generation is not None and collector.collections[generation] == 1
        assert freed[0]() is None
        assert set(passes) == {threading.get_ident()}
        collector.stop()
        assert gc.isenabled()  # given back as it was
    finally:
        collector.stop()
        gc.enable() if outer else gc.disable()


def test_full_passes_are_spaced_out(qapp):
    thresholds = gc.get_threshold()
    collector = MainThreadGarbageCollector(full_interval_s=3600)
    collector.start()
    try:
        gc.set_threshold(10, 1, 1)
        for _ in range(50):  # counts past every threshold, many times
            for _ in range(100):
                _Cycle()
            collector.check()
        assert collector.collections[2] == 0 and collector.collections[1] > 0
        collector.full_interval_s = 0
        for _ in range(50):
            for _ in range(100):
                _Cycle()
            collector.check()
        assert collector.collections[2] > 0
    finally:
        gc.set_threshold(*thresholds)
        collector.stop()


def test_check_refuses_other_threads(qapp):
    collector = MainThreadGarbageCollector()
    errors = []

    def check():
        try:
            collector.check()
        except RuntimeError as error:
            errors.append(str(error))

    thread = threading.Thread(target=check)
    thread.start()
    thread.join()
    assert errors == ["MainThreadGarbageCollector.check runs on the UI thread only"]
