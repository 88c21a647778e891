"""Fixtures and hooks of the whole test suite; shared helpers live in the *_helpers.py modules."""

import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import keras  # noqa: E402
import pytest  # noqa: E402
from model_helpers import TINY  # noqa: E402


@pytest.fixture(autouse=True)
def _reset_keras_state():
    # Cheap on purpose: keras.backend.clear_session() costs up to a second per test under
    # PyTorch, and kbert names its layers explicitly, so no test depends on fresh names.
    keras.utils.set_random_seed(1234)
    yield
    if keras.mixed_precision.global_policy().name != "float32":
        keras.mixed_precision.set_global_policy("float32")


@pytest.fixture(autouse=True)
def _auto_engine_on_keras(monkeypatch):
    # On a CPU, engine="auto" takes ONNX Runtime from the first call, making the graph in
    # the user's kbert cache; the tests of everything else watch the Keras model's calls.
    # The tests of "auto" itself set it back (test_auto_engine, test_inference_engines).
    from kbert.inference import inference_engine

    monkeypatch.setattr(inference_engine, "AUTO_PREFERS_ONNX_RUNTIME", False)


@pytest.fixture(autouse=True)
def _collect_garbage_on_the_ui_thread(request):
    # As the app does (kbert_gui.services.main_thread_garbage_collector): a collection in
    # a worker thread that frees Qt objects crashes PySide, so Qt tests collect on the UI
    # thread.
    if "qapp" not in request.fixturenames:
        yield
        return
    from kbert_gui.services.main_thread_garbage_collector import MainThreadGarbageCollector

    collector = MainThreadGarbageCollector()
    collector.start()
    yield
    collector.stop()


GUI_TESTS = pathlib.Path(__file__).parent / "gui"
# The app's tests run on the JAX pass (the app's default backend); on the others, the
# tests marked `every_backend` (the app trains a model, then uses it) stand for them:
# every kbert call the app makes is tested on every backend in tests/.
APP_TEST_SKIP = pytest.mark.skip(
    reason="the app's tests run on the JAX pass; on the others, those marked every_backend "
    "stand for them"
)


def pytest_collection_modifyitems(config, items):
    if keras.config.backend() == "jax":
        return
    for item in items:
        in_app_tests = GUI_TESTS in pathlib.Path(str(item.path)).parents
        if in_app_tests and item.get_closest_marker("every_backend") is None:
            item.add_marker(APP_TEST_SKIP)


@pytest.fixture
def tiny_config():
    return dict(TINY)
