"""The app collects garbage on the UI thread only (a worker's pass crashed PySide)."""

import gc
import threading
import weakref

import pytest

from kbert_gui.services import main_thread_garbage_collector
from kbert_gui.services.main_thread_garbage_collector import MainThreadGarbageCollector
from kbert_gui.services.main_thread_garbage_collector import long_lived_imports


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


def test_long_lived_imports_hold_the_passes_then_freeze_what_is_alive(qapp, monkeypatch):
    collector = MainThreadGarbageCollector()
    collector.start()
    try:
        # The first block of the process freezes (the app's Keras import).
        monkeypatch.setattr(main_thread_garbage_collector, "_frozen", False)
        frozen_before = gc.get_freeze_count()
        done = []

        def import_in_a_worker():
            with long_lived_imports():
                # What an import leaves: many tracked objects, far past the thresholds.
                done.append([[] for _ in range(50_000)])
                done.append(collector_result_while_importing.wait(10))

        collector_result_while_importing = threading.Event()
        worker = threading.Thread(target=import_in_a_worker)
        worker.start()
        while len(done) < 1:
            worker.join(0.01)
        assert collector.check() is None  # no pass while the imports run
        collector_result_while_importing.set()
        worker.join()
        # Everything alive when the block ended left the collector's generations: the
        # objects the block made are frozen, none is in a generation a pass looks at.
        assert gc.get_freeze_count() >= frozen_before + 50_000
        in_generations = {id(item) for item in gc.get_objects()}
        assert not any(id(item) in in_generations for item in done[0])
        # After it the passes run again, on the UI thread.
        freed = []
        for _ in range(5_000):
            _Cycle()
        cycle = _Cycle()
        freed.append(weakref.ref(cycle))
        del cycle
        assert collector.check() is not None
        assert freed[0]() is None
    finally:
        collector.stop()


def test_a_later_long_lived_imports_block_freezes_none_of_its_objects(monkeypatch):
    # The imports are done: the first block of the process has frozen them.
    monkeypatch.setattr(main_thread_garbage_collector, "_frozen", True)
    frozen_before = gc.get_freeze_count()
    with long_lived_imports():
        kept = [[] for _ in range(1_000)]
    # Nothing joined the permanent generation (frozen objects that die meanwhile lower
    # the count, so it may fall), and the block's objects are still in the generations
    # the collector's passes look at.
    assert gc.get_freeze_count() <= frozen_before
    in_generations = {id(item) for item in gc.get_objects()}
    assert all(id(item) in in_generations for item in kept)
