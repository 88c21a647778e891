"""What every tab of the app shares: the model, the worker pools, the status line."""

from PySide6.QtCore import QObject
from PySide6.QtCore import Signal

from kbert_gui import FINE_TUNING_LINK_PREFIX
from kbert_gui import MODEL_LINK_PREFIX
from kbert_gui.services.environment_info import EnvironmentInfo
from kbert_gui.services.file_dialogs import FileDialogs
from kbert_gui.services.main_thread_garbage_collector import long_lived_imports
from kbert_gui.services.model_opener import ModelOpener
from kbert_gui.services.model_store import ModelStore
from kbert_gui.services.worker import Worker
from kbert_gui.services.worker_pool import WorkerPool
from kbert_gui.tab_key import TabKey


class AppContext(QObject):
    """The services a tab is built with (`SomeTab(context)`).

    - `models`: the `ModelStore` (current model, cached task models).
    - `inference_pool`: a serial `WorkerPool` for every prediction, so that a model is
      never called from two threads at once.
    - `training_pool`: a serial `WorkerPool` for fine-tuning, so predictions stay
      responsive while a model trains.
    - `opener`: the `ModelOpener`, which checks a model the user picks before it
      becomes the current one, and describes the current one.
    - `settings`: the app's `QSettings` (the model store's).
    - `file_dialogs`: `FileDialogs` that start in the folder last used for their kind.
    - `environment`: the `EnvironmentInfo` (versions, backend, device) once Keras
      has loaded, else None.

    Signals:
        status_message(str): a line for the status bar.
        environment_ready(str): the backend and device in words, once Keras has loaded.
        tab_requested(str): a tab asks the window to show the tab with this `key`.
        fine_tuning_requested(str): a tab asks the fine-tuning tab to set up this task
            (a kbert task name, e.g. "qa"); `tab_requested` follows.

    Args:
        models: the `ModelStore`; default a new one on the `demo` preset.
        parent: the owning QObject.
    """

    status_message = Signal(str)
    environment_ready = Signal(str)
    tab_requested = Signal(str)
    fine_tuning_requested = Signal(str)

    def __init__(self, models=None, parent=None):
        super().__init__(parent)
        self.models = models if models is not None else ModelStore(parent=self)
        self.inference_pool = WorkerPool(max_threads=1, parent=self)
        self.training_pool = WorkerPool(max_threads=1, parent=self)
        self.opener = ModelOpener(self.models, self.inference_pool, parent=self)
        self.settings = self.models.settings
        self.file_dialogs = FileDialogs(self.settings)
        self.environment = None

    def run_inference(self, function, *args, **kwargs):
        """Queues `function(worker, *args, **kwargs)` on the inference pool; returns the
        `Worker` (connect its `signals` before control returns to the event loop)."""
        return self.inference_pool.start(Worker(function, *args, **kwargs))

    def run_training(self, function, *args, **kwargs):
        """Queues `function(worker, ...)` on the training pool; returns the `Worker`."""
        return self.training_pool.start(Worker(function, *args, **kwargs))

    def open_model(self, source, tab_key):
        """Makes `source` the current model and shows the tab `tab_key`."""
        self.models.set_source(source)
        self.tab_requested.emit(tab_key)

    def follow_link(self, href, tab_key):
        """Follows a link of a tab's warning: `model:NAME` opens the model NAME in the tab
        `tab_key`; `fine-tune:TASK` shows the fine-tuning tab set to the task TASK; any
        other href is a tab's key (`TabKey`) and shows that tab."""
        if href.startswith(MODEL_LINK_PREFIX):
            self.open_model(href[len(MODEL_LINK_PREFIX):], tab_key)
        elif href.startswith(FINE_TUNING_LINK_PREFIX):
            self.fine_tuning_requested.emit(href[len(FINE_TUNING_LINK_PREFIX):])
            self.tab_requested.emit(TabKey.FINE_TUNING)
        else:
            self.tab_requested.emit(href)

    def load_environment(self):
        """Imports Keras off the UI thread and reports the backend and device."""
        worker = self.run_inference(_describe_environment)
        worker.signals.result.connect(self._set_environment)
        worker.signals.error.connect(lambda message: self.status_message.emit(message))
        return worker

    def _set_environment(self, environment):
        self.environment = environment
        self.environment_ready.emit(environment.device)

    def stop_all(self, timeout_ms):
        """Asks every worker to stop and waits; True if all finished in time."""
        for pool in (self.training_pool, self.inference_pool):
            pool.cancel_all()
        half = max(timeout_ms // 2, 1)
        return all(pool.wait_for_done(half) for pool in (self.training_pool, self.inference_pool))


def _describe_environment(worker):
    # Keras and its backend stay for the app's life: out of the collector's passes.
    with long_lived_imports():
        return EnvironmentInfo.read()
