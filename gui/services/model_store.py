"""Which model the app works with, and the task models loaded from it."""

import contextlib
import threading

from PySide6.QtCore import QObject
from PySide6.QtCore import QSettings
from PySide6.QtCore import Signal

from kbert.model_table import model_class
from kbert_gui import DEFAULT_PRESET
from kbert_gui.services.model_description import ModelDescription
from kbert_gui.services.model_description import short_name
from kbert_gui.services.thread_log_handler import ThreadLogHandler

RECENT_KEY = "models/recent"
MAX_RECENT = 8


class ModelStore(QObject):
    """The app's current model (a preset name or folder) and a cache of task models.

    The UI thread only sets and reads the *source* (`set_source`, `source`); the
    loading happens in workers, through `model(class_name)`, which imports Keras on
    first use, converts a non-kbert checkpoint folder (Hugging Face, Google,
    keras-hub) into a cached preset once, and loads the task class from it. A
    pretrainer preset serves every task class: missing heads start fresh and are
    listed in the model's `freshly_initialized_heads`. `describe(source)` reads what a
    model is (its `ModelDescription`: class, labels, name), resolving it first.

    Whenever a worker converts or loads a model (not when it finds it cached), the
    store says so: `loading_started`, then kbert's log lines of that work as
    `loading_step`, then `loading_finished`, so that the window can show a busy
    indicator with the conversion's own progress.

    Signals:
        source_changed(str): the user picked another model.
        described(object): a `ModelDescription` was read (any source, from a worker).
        loading_started(str): a worker began converting or loading; what, in words.
        loading_step(str): one of kbert's log lines from that work.
        loading_finished(): that work ended (loaded or failed).

    Args:
        source: the first model; default the bundled `demo` preset.
        settings: the `QSettings` holding the recent list (default: the app's).
        cache_dir: kbert's cache folder, where converted checkpoints and downloads go
            (default: kbert's, `$KBERT_CACHE` or `~/.cache/kbert`).
        parent: the owning QObject.
    """

    source_changed = Signal(str)
    described = Signal(object)
    loading_started = Signal(str)
    loading_step = Signal(str)
    loading_finished = Signal()

    def __init__(self, source=DEFAULT_PRESET, settings=None, cache_dir=None, parent=None):
        super().__init__(parent)
        self._source = str(source)
        self._settings = settings if settings is not None else QSettings()
        self._cache_dir = cache_dir
        self._models = {}
        self._descriptions = {}
        self._lock = threading.Lock()

    @property
    def source(self):
        return self._source

    @property
    def settings(self):
        """The `QSettings` the store keeps its recent list in (the app's)."""
        return self._settings

    def set_source(self, source):
        """Makes `source` (a preset name or a checkpoint folder) the current model."""
        source = str(source)
        self._remember(source)
        if source != self._source:
            self._source = source
            self.source_changed.emit(source)

    def recent_sources(self):
        """Models picked before, newest first."""
        value = self._settings.value(RECENT_KEY, [])
        if isinstance(value, str):
            value = [value]
        return [str(item) for item in value or []]

    def _remember(self, source):
        recent = [source] + [item for item in self.recent_sources() if item != source]
        self._settings.setValue(RECENT_KEY, recent[:MAX_RECENT])

    # --- Worker side ------------------------------------------------------------------

    def model(self, class_name, source=None):
        """The model class `class_name` (a row of `kbert.model_table`) loaded from
        `source` (default: current).

        Call from a worker thread: it may import Keras, convert a checkpoint and read
        weights. Models are cached per (class, source).
        """
        source = self._source if source is None else str(source)
        key = (class_name, source)
        with self._lock:
            if key not in self._models:
                with self._loading(f"Loading {short_name(source)}…"):
                    keras_class = model_class(class_name).keras_class()
                    model = keras_class.from_preset(self.preset_folder(source))
                if model.tokenizer is None:
                    raise ValueError(
                        f"The model {source!r} has no vocabulary (vocab.txt), so its texts "
                        "cannot be tokenized."
                    )
                self._models[key] = model
            return self._models[key]

    def describe(self, source=None):
        """The `ModelDescription` of `source` (default: current). Call from a worker:
        it resolves the source (converting a checkpoint once) and reads its config.

        Raises:
            ValueError: the resolver's message for a source that is no model (an
                empty folder, a misspelt name), or the reader's for a broken preset.
        """
        source = self._source if source is None else str(source)
        with self._lock:
            description = self._descriptions.get(source)
        if description is None:
            # Outside the lock: a conversion takes minutes, and `forget` (UI thread)
            # must not wait for it.
            with self._loading(f"Opening {short_name(source)}…"):
                description = ModelDescription.read(source, self.preset_folder(source))
            with self._lock:
                self._descriptions[source] = description
        self.described.emit(description)
        return description

    def forget(self, source):
        """Drops cached models of `source` (it was retrained or rewritten)."""
        with self._lock:
            for key in [key for key in self._models if key[1] == str(source)]:
                del self._models[key]
            self._descriptions.pop(str(source), None)

    @contextlib.contextmanager
    def _loading(self, message):
        self.loading_started.emit(message)
        try:
            with ThreadLogHandler.capture(self.loading_step.emit):
                yield
        finally:
            self.loading_finished.emit()

    def preset_folder(self, source):
        """A kbert preset for `source`: any model source `kbert.presets.resolve_preset`
        takes (a preset, a name, a checkpoint folder converted once into the cache)."""
        from kbert.presets import resolve_preset

        return resolve_preset(source, cache_dir=self._cache_dir)
