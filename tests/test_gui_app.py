"""The app's foundation: workers, latest-only requests, the model store, the window."""

import pathlib
import shutil
import subprocess
import sys
import threading
import time

import pytest
from PySide6.QtCore import QMimeData
from PySide6.QtCore import QPointF
from PySide6.QtCore import Qt
from PySide6.QtCore import QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QLabel

from kbert_gui.services.latest_request_runner import LatestRequestRunner
from kbert_gui.window.main_window import MainWindow
from kbert_gui.services.worker import Worker
from kbert_gui.services.worker_pool import WorkerPool
from gui_helpers import make_context
from gui_helpers import make_hugging_face_folder
from gui_helpers import stop_context

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]


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


@pytest.fixture(scope="module")
def hugging_face_folder(tmp_path_factory):
    return make_hugging_face_folder(tmp_path_factory.mktemp("gui") / "hf-bert")


def test_model_store_converts_a_checkpoint_folder_once_and_loads_task_models(
    tmp_path, hugging_face_folder
):
    context = make_context(tmp_path, source=str(hugging_face_folder))
    store = context.models
    preset = store.preset_folder(store.source)
    assert preset.parent == tmp_path / "converted"
    written = (preset / "model.weights.h5").stat().st_mtime_ns
    assert store.preset_folder(store.source) == preset
    assert (preset / "model.weights.h5").stat().st_mtime_ns == written

    model = store.model("BertMaskedLM")
    assert type(model).__name__ == "BertMaskedLM"
    assert store.model("BertMaskedLM") is model
    assert model.fill_mask("w1 [MASK] w2").masks[0].start == 3
    store.forget(store.source)
    assert store.model("BertMaskedLM") is not model


def test_model_store_explains_a_missing_model(tmp_path):
    store = make_context(tmp_path, source=str(tmp_path / "nowhere")).models
    with pytest.raises(ValueError, match="No model at .*nowhere"):
        store.model("BertMaskedLM")


def test_model_store_describes_a_model_and_reports_its_conversion(tmp_path, hugging_face_folder):
    store = make_context(tmp_path, source=str(hugging_face_folder)).models
    events = []
    store.loading_started.connect(lambda message: events.append(("started", message)))
    store.loading_step.connect(lambda message: events.append(("step", message)))
    store.loading_finished.connect(lambda: events.append("finished"))
    described = []
    store.described.connect(described.append)

    description = store.describe()
    assert description.class_name == "BertMaskedLM" and description.kind == "masked LM"
    assert description.folder.parent == tmp_path / "converted"
    assert description.title == "hf-bert (masked LM)" and description.tab_key == "explorer"
    assert f"kbert preset: {description.folder}" in description.details
    # The conversion's own log lines, between the start and the end of the work.
    assert events[0] == ("started", "Opening hf-bert…") and events[-1] == "finished"
    steps = [message for kind, message in events[1:-1]]
    assert any("is a huggingface checkpoint: converting it once" in step for step in steps)
    assert any(step.startswith("Wrote BertMaskedLM preset to") for step in steps)
    assert described == [description]

    # Described and loaded once: later calls are answered from the cache, silently.
    events.clear()
    assert store.describe() is description
    store.model("BertMaskedLM")
    assert events == [("started", "Loading hf-bert…"), "finished"]
    events.clear()
    store.model("BertMaskedLM")
    assert events == []


def test_model_names_come_from_the_run_and_the_task():
    from kbert_gui.services.model_description import ModelDescription
    from kbert_gui.services.model_description import short_name

    assert short_name("demo") == "demo" and short_name("hf://google-bert/bert-base") == (
        "hf://google-bert/bert-base"
    )
    assert short_name("/home/me/runs/sentiment/model") == "runs/sentiment"
    assert short_name("/home/me/presets/tiny") == "tiny"
    run = "/home/me/runs/sentiment/model"
    classifier = ModelDescription(run, pathlib.Path(run), "BertClassifier", ("neg", "pos"))
    assert classifier.title == "runs/sentiment (classifier: neg, pos)"
    assert classifier.tab_key == "classify" and classifier.is_fine_tuned
    tags = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC")
    tagger = ModelDescription(run, pathlib.Path(run), "BertTokenClassifier", tags)
    assert tagger.title == "runs/sentiment (tagger: PER, LOC)"
    many = ModelDescription(run, pathlib.Path(run), "BertClassifier", tuple("abcdefgh"))
    assert many.title == "runs/sentiment (classifier: a, b, c, d, e, … 8 labels)"
    qa = ModelDescription("squad", pathlib.Path("squad"), "BertQuestionAnswerer")
    assert (qa.title, qa.tab_key) == ("squad (question answering)", "qa")
    assert ModelDescription("demo", pathlib.Path("d"), "BertPretrainer").tab_key == "explorer"


def test_model_store_remembers_recent_models(qtbot, tmp_path):
    store = make_context(tmp_path).models
    with qtbot.waitSignal(store.source_changed) as changed:
        store.set_source("/models/a")
    assert changed.args == ["/models/a"]
    store.set_source("/models/b")
    store.set_source("/models/a")
    assert store.recent_sources() == ["/models/a", "/models/b"]


def _window(qtbot, tmp_path):
    context = make_context(tmp_path)
    first, second = QLabel("first"), QLabel("second")
    first.setWindowTitle("First")
    second.setWindowTitle("Second")
    window = MainWindow(context, [("first", first), ("second", second)])
    qtbot.addWidget(window)
    return window


def _drop(window, folder):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(folder))])
    drop = QDropEvent(
        QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(drop)


def test_window_opens_a_dropped_model_folder_and_switches_tabs_on_request(qtbot, tmp_path):
    from kbert.presets import BUILTIN_PRESETS

    window = _window(qtbot, tmp_path)
    assert window.model_label.text() == "demo"
    assert [window.tabs.tabText(index) for index in range(2)] == ["First", "Second"]

    folder = tmp_path / "my-model"
    shutil.copytree(BUILTIN_PRESETS["demo"], folder)
    with qtbot.waitSignal(window.context.models.source_changed, timeout=30000):
        _drop(window, folder)
    assert window.context.models.source == str(folder)
    assert window.context.models.recent_sources()[0] == str(folder)
    qtbot.waitUntil(lambda: window.model_label.text() == "my-model (pretrained)", timeout=30000)

    window.context.open_model("demo", "second")
    assert window.tabs.currentWidget() is window.tab("second")
    qtbot.waitUntil(lambda: window.model_label.text() == "demo (pretrained)", timeout=30000)
    stop_context(window.context)


def test_opening_an_empty_folder_says_what_a_model_is_and_keeps_the_model(qtbot, tmp_path):
    window = _window(qtbot, tmp_path)
    recent = window.context.models.recent_sources()
    empty = tmp_path / "empty"
    empty.mkdir()
    with qtbot.waitSignal(window.context.opener.failed, timeout=60000):
        _drop(window, empty)
    message = window.error_banner.message
    assert message.startswith(f"Cannot open {empty}: '{empty}' is not a model folder: a model ")
    assert "kbert preset" in message and "The folder holds: nothing" in message
    assert "max() arg" not in message
    assert message.endswith("The model is still demo.")
    assert window.context.models.source == "demo"
    assert window.model_label.text() in ("demo", "demo (pretrained)")
    assert window.context.models.recent_sources() == recent
    stop_context(window.context)


def test_window_shows_backend_and_device_once_keras_loads(qtbot, tmp_path):
    import keras

    window = _window(qtbot, tmp_path)
    assert window.device_label.text() == "loading Keras…"
    with qtbot.waitSignal(window.context.environment_ready, timeout=30000):
        window.context.load_environment()
    backend = {"jax": "JAX", "tensorflow": "TensorFlow", "torch": "PyTorch"}[keras.config.backend()]
    assert window.device_label.text().startswith(f"{backend} on ")
    stop_context(window.context)


def test_closing_the_window_stops_running_work_within_five_seconds(qtbot, tmp_path):
    window = _window(qtbot, tmp_path)
    window.show()
    started = threading.Event()

    def train_until_cancelled(worker):
        started.set()
        while not worker.is_cancelled():
            time.sleep(0.05)

    worker = window.context.run_training(train_until_cancelled)
    assert started.wait(5)
    begin = time.perf_counter()
    window.close()
    assert time.perf_counter() - begin < 5
    assert worker.is_done()
    assert window.context.training_pool.active_workers == []


def test_kbert_gui_command_offers_the_apps_options_without_loading_keras():
    code = (
        "import sys\n"
        "import kbert.cli\n"
        "try:\n"
        "    kbert.cli.main(['gui', '--help'])\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
        "print('keras imported:', 'keras' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPOSITORY, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "--model MODEL" in result.stdout and "--backend" in result.stdout
    assert result.stdout.strip().endswith("keras imported: False")


def test_gil_holding_extensions_are_imported_up_front_and_missing_ones_skipped():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from kbert_gui.app import import_gil_holding_extensions, GIL_HOLDING_EXTENSIONS\n"
        "assert 'ml_dtypes' in GIL_HOLDING_EXTENSIONS\n"
        "import_gil_holding_extensions(('ml_dtypes', 'no_such_module_kbert_test'))\n"
        "print('ml_dtypes' in sys.modules, 'keras' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split() == ["True", "False"]  # the extension, and no Keras yet
