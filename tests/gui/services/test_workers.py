"""Background work: workers that talk only through signals, latest-only requests."""

import threading
import time

from kbert_gui.services.latest_request_runner import LatestRequestRunner
from kbert_gui.services.worker import Worker
from kbert_gui.services.worker_pool import WorkerPool


def _run_worker(qtbot, function, *args):
    pool = WorkerPool()
    events = []
    worker = Worker(function, *args)
    worker.signals.started.connect(lambda: events.append("started"))
    worker.signals.progress.connect(lambda value: events.append(("progress", value)))
    worker.signals.result.connect(lambda value: events.append(("result", value)))
    worker.signals.error.connect(lambda message: events.append(("error", message)))
    worker.signals.cancelled.connect(lambda: events.append("cancelled"))
    with qtbot.waitSignal(worker.signals.finished, timeout=10000):
        pool.start(worker)
    assert pool.wait_for_done(5000)
    return worker, events


def test_worker_reports_progress_then_its_result(qtbot):
    def count(worker, upto):
        for value in range(upto):
            worker.report(value)
        return "done"

    worker, events = _run_worker(qtbot, count, 3)
    assert events == ["started", ("progress", 0), ("progress", 1), ("progress", 2), ("result", "done")]
    assert worker.is_done()


def test_worker_turns_exceptions_into_messages(qtbot):
    def fail_with_value_error(worker):
        raise ValueError("`top_k` must be positive. Received: top_k=0")

    def fail_with_bug(worker):
        raise KeyError("token_ids")

    _, events = _run_worker(qtbot, fail_with_value_error)
    assert events == ["started", ("error", "`top_k` must be positive. Received: top_k=0")]
    _, events = _run_worker(qtbot, fail_with_bug)
    assert events == ["started", ("error", "KeyError: 'token_ids'")]


def test_work_whose_signals_were_deleted_with_its_ui_ends_quietly():
    import shiboken6

    reports = []

    def report_twice(worker):
        reports.append("ran")
        worker.report(1)
        reports.append("unreachable")

    worker = Worker(report_twice)
    shiboken6.delete(worker.signals)  # what Qt does to the object when its UI goes
    worker.run()  # on the calling thread: an exception would surface here
    assert worker.is_done() and worker.is_cancelled()
    assert reports == []  # not even started: nothing could have been told
    assert not shiboken6.isValid(worker.signals)


def test_worker_stops_cooperatively_when_cancelled(qtbot):
    pool = WorkerPool()
    entered = threading.Event()

    def loop_until_cancelled(worker):
        entered.set()
        while not worker.is_cancelled():
            time.sleep(0.01)
        return "unused"

    worker = Worker(loop_until_cancelled)
    cancelled = []
    worker.signals.cancelled.connect(lambda: cancelled.append(True))
    worker.signals.result.connect(lambda value: cancelled.append(value))
    pool.start(worker)
    assert entered.wait(5)
    with qtbot.waitSignal(worker.signals.finished, timeout=5000):
        pool.cancel_all()
    assert cancelled == [True]
    assert pool.wait_for_done(5000) and pool.active_workers == []


def test_latest_request_runner_delivers_only_the_newest_result(qtbot):
    pool = WorkerPool()
    runner = LatestRequestRunner(pool, delay_ms=50)
    calls = []
    release = threading.Event()

    def predict(text):
        calls.append(text)
        if text == "slow":
            release.wait(5)
        return text.upper()

    results = []
    runner.result.connect(results.append)
    # Debounced: three quick requests run once, the last.
    for text in ("a", "ab", "abc"):
        runner.submit(predict, text)
    qtbot.waitUntil(lambda: results == ["ABC"], timeout=5000)
    assert calls == ["abc"]

    # A request superseded while it runs never shows its result.
    runner.submit(predict, "slow")
    qtbot.waitUntil(lambda: "slow" in calls, timeout=5000)
    runner.submit(predict, "new")
    release.set()
    qtbot.waitUntil(lambda: results[-1] == "NEW", timeout=5000)
    assert results == ["ABC", "NEW"]
    qtbot.waitUntil(lambda: not runner.busy, timeout=5000)
    assert pool.wait_for_done(5000)


def test_latest_request_runner_reports_errors_of_the_latest_request_only(qtbot):
    pool = WorkerPool()
    runner = LatestRequestRunner(pool, delay_ms=0)
    errors, results = [], []
    runner.error.connect(errors.append)
    runner.result.connect(results.append)

    def check(text):
        if "[MASK]" not in text:
            raise ValueError(f"No [MASK] in {text!r}.")
        return text

    runner.submit(check, "no mask")
    qtbot.waitUntil(lambda: errors == ["No [MASK] in 'no mask'."], timeout=5000)
    runner.submit(check, "a [MASK]")
    qtbot.waitUntil(lambda: results == ["a [MASK]"], timeout=5000)
    assert errors == ["No [MASK] in 'no mask'."]
    assert pool.wait_for_done(5000)
