"""ThreadLogHandler: each thread's kbert log lines reach that thread's captures, all of them."""

import logging
import sys
import threading

from kbert_gui.services.thread_log_handler import ThreadLogHandler

LOGGER = "kbert.tests.thread_log"


def test_a_capture_gets_its_threads_lines_at_its_level_and_no_others():
    logger = logging.getLogger(LOGGER)
    mine, warnings, others = [], [], []

    def other_thread():
        with ThreadLogHandler.capture(others.append):
            logger.info("from the other thread")

    with ThreadLogHandler.capture(mine.append):
        with ThreadLogHandler.capture(warnings.append, level=logging.WARNING):
            logger.info("read %d examples", 32)
            logger.warning("a fresh head")
            worker = threading.Thread(target=other_thread)
            worker.start()
            worker.join()
        logger.info("after the inner capture")
    logger.info("after both")

    assert mine == ["read 32 examples", "a fresh head", "after the inner capture"]
    assert warnings == ["a fresh head"]
    assert others == ["from the other thread"]


def test_captures_lower_the_level_while_open_and_restore_it():
    logger = logging.getLogger("kbert")
    before = logger.level
    logger.setLevel(logging.WARNING)
    try:
        with ThreadLogHandler.capture(lambda line: None):
            assert logger.level == logging.INFO
            with ThreadLogHandler.capture(lambda line: None, level=logging.DEBUG):
                assert logger.level == logging.DEBUG
            assert logger.level == logging.INFO
        assert logger.level == logging.WARNING
    finally:
        logger.setLevel(before)


def test_the_converter_sees_the_record():
    lines = []
    with ThreadLogHandler.capture(lines.append, convert=lambda r: (r.name, r.levelname)):
        logging.getLogger(LOGGER).warning("careful")
    assert lines == [(LOGGER, "WARNING")]


def test_no_line_is_lost_while_another_threads_capture_ends():
    """Python's logging walks a logger's handlers without a lock: a handler removed by
    another thread during the walk makes it skip the next one: a training run's lines
    must not go missing from its log when a model load ends meanwhile."""
    logger = logging.getLogger(LOGGER)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    lost = []
    try:
        for trial in range(500):
            opened, release = threading.Event(), threading.Event()

            def other_work():  # a model load: its capture opened before the run's
                with ThreadLogHandler.capture(lambda line: None):
                    opened.set()
                    release.wait()

            other = threading.Thread(target=other_work)
            other.start()
            opened.wait()
            received = []
            with ThreadLogHandler.capture(received.append):
                release.set()  # ... and ends while the run logs
                for index in range(50):
                    logger.info("line %d", index)
            other.join()
            if received != [f"line {index}" for index in range(50)]:
                lost.append((trial, 50 - len(received)))
    finally:
        sys.setswitchinterval(interval)
    assert not lost, f"(trial, lines lost): {lost}"


def test_no_line_is_lost_while_other_threads_open_and_close_captures():
    """Captures that come and go lower and restore the logger's level: a run's INFO
    lines must pass at every moment in between."""
    logger = logging.getLogger(LOGGER)
    count, received, stop = 3000, [], threading.Event()

    def churn():  # the other tabs: predictions, each with its own capture
        while not stop.is_set():
            with ThreadLogHandler.capture(lambda line: None, level=logging.WARNING):
                pass

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    churners = [threading.Thread(target=churn) for _ in range(3)]
    try:
        for thread in churners:
            thread.start()
        with ThreadLogHandler.capture(received.append):
            for index in range(count):
                logger.info("line %d", index)
    finally:
        stop.set()
        for thread in churners:
            thread.join()
        sys.setswitchinterval(interval)

    assert received == [f"line {index}" for index in range(count)]
