"""`kbert gui` / `kbert-gui`: starts the desktop app.

The window appears first; Keras, the backend and the model load afterwards in a
worker, behind a status line, so the window is up within a couple of seconds even on
a small machine. Only PySide6 and the standard library are imported before `show()`.
On JAX, compiled programs are kept on disk as the `kbert` command keeps them
(`kbert.cli.choose_backend_defaults`), so a later start skips compiling the model.

PySide6 is the `gui` extra of kbert (`pip install "kbert-keras[gui]"`); without it the
command says so in one line and exits 1. This module imports no Qt at the top, so
that `kbert --help` and `kbert gui --help` work without it.
"""

import argparse
import os
import sys
import time

from kbert.cli import choose_backend_defaults
from kbert.commands import EXIT_ERROR
from kbert.commands import MODEL_HELP
from kbert_gui import DEFAULT_PRESET
from kbert_gui.tab_key import TabKey

APP_NAME = "kbert"
# Qt platforms that need a display server (QT_QPA_PLATFORM may list several, "a;b").
_DISPLAY_PLATFORMS = {
    "xcb": "DISPLAY",
    "wayland": "WAYLAND_DISPLAY",
    "wayland-egl": "WAYLAND_DISPLAY",
}
NO_PYSIDE6_MESSAGE = (
    "kbert gui: error: the desktop app needs PySide6, which is not installed: "
    'pip install "kbert-keras[gui]"'
)
NO_DISPLAY_MESSAGE = (
    "kbert gui: error: no display found ({variables} not set), so the window cannot open. "
    "Run it in a desktop session, or under a virtual display: xvfb-run -a kbert gui. "
    "Scripts and tests without any display can use Qt's offscreen platform: "
    "QT_QPA_PLATFORM=offscreen kbert gui."
)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="kbert gui",
        description=(
            "kbert's desktop app: masked words, question answering, classify & tag, "
            "fine-tuning."
        ),
    )
    add_arguments(parser)
    return parser


def add_arguments(parser):
    """The app's options (shared with the `kbert gui` subcommand)."""
    parser.add_argument(
        "--model",
        default=DEFAULT_PRESET,
        metavar="MODEL",
        help=f"{MODEL_HELP} (default: the bundled {DEFAULT_PRESET!r} model)",
    )
    parser.add_argument(
        "--backend",
        choices=("jax", "tensorflow", "torch"),
        help="Keras backend (default: $KERAS_BACKEND, else jax)",
    )


def create_window(model=DEFAULT_PRESET, context=None):
    """The `MainWindow` with every tab (a QApplication must exist).

    Args:
        model: the first model, for a new `AppContext` on the app's settings.
        context: the `AppContext` to use instead (tests give one with its own settings).
    """
    from kbert_gui.classify.classify_tab import ClassifyTab
    from kbert_gui.fine_tuning.fine_tuning_tab import FineTuningTab
    from kbert_gui.masked_words.masked_words_tab import MaskedWordsTab
    from kbert_gui.question_answering.question_answering_tab import QuestionAnsweringTab
    from kbert_gui.runs.runs_launcher import RunsLauncher
    from kbert_gui.services.app_context import AppContext
    from kbert_gui.services.model_store import ModelStore
    from kbert_gui.window.main_window import MainWindow

    context = context if context is not None else AppContext(ModelStore(model))
    tabs = [
        (TabKey.MASKED_WORDS, MaskedWordsTab(context)),
        (TabKey.QUESTION_ANSWERING, QuestionAnsweringTab(context)),
        (TabKey.CLASSIFY, ClassifyTab(context)),
        (TabKey.FINE_TUNING, FineTuningTab(context)),
    ]
    window = MainWindow(context, tabs)
    context.setParent(window)
    window.runs = RunsLauncher(window, tabs[-1][1])  # File ▸ Compare runs…
    return window


def missing_display(environment=os.environ, platform=sys.platform):
    """Why Qt would find no display to open a window on, or None when it can.

    On Linux and the BSDs a window needs an X server (`DISPLAY`) or a Wayland
    compositor (`WAYLAND_DISPLAY`), unless QT_QPA_PLATFORM names a platform without
    one (offscreen, vnc, eglfs, ...). Without this check Qt aborts the process.
    """
    if not platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return None
    requested = environment.get("QT_QPA_PLATFORM", "").split(";")
    named = [part.split(":")[0].strip() for part in requested if part.strip()]
    if any(name not in _DISPLAY_PLATFORMS for name in named):
        return None
    variables = sorted({_DISPLAY_PLATFORMS[name] for name in named or _DISPLAY_PLATFORMS})
    if any(environment.get(variable) for variable in variables):
        return None
    return NO_DISPLAY_MESSAGE.format(variables=" and ".join(variables))


# Extension modules whose import runs one long C initialisation holding the GIL.
GIL_HOLDING_EXTENSIONS = ("ml_dtypes",)


def import_gil_holding_extensions(names=GIL_HOLDING_EXTENSIONS):
    """Imports `names` on this (the UI) thread, before the window shows.

    ml_dtypes (which JAX and TensorFlow import first) registers its NumPy types in one C
    call of about 0.6 s that holds the GIL. In the worker that imports Keras it froze a
    shown window for that long, since with the collector on the UI thread nothing in the
    worker hands the GIL over meanwhile (`benchmarks/gui_heartbeat.py`). Before `show()`
    the same time passes with nothing on screen to freeze. A missing module is skipped.
    """
    import importlib

    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def missing_pyside6():
    """Why the app cannot start without PySide6 (the `gui` extra), or None when it can.

    Only a PySide6 that is not installed is this problem; one that is installed but
    fails to load (a missing system library) raises its own error.
    """
    import importlib

    try:
        importlib.import_module("PySide6.QtWidgets")
    except ModuleNotFoundError as error:
        if error.name and error.name.split(".")[0] in ("PySide6", "shiboken6"):
            return NO_PYSIDE6_MESSAGE
        raise
    return None


def run(args):
    """Starts the app with parsed `args`; returns its exit status."""
    launched = time.perf_counter()
    problem = missing_pyside6() or missing_display()
    if problem is not None:
        print(problem, file=sys.stderr)
        return EXIT_ERROR
    if args.backend:
        os.environ["KERAS_BACKEND"] = args.backend
    choose_backend_defaults()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    from kbert_gui.services.main_thread_garbage_collector import MainThreadGarbageCollector

    MainThreadGarbageCollector(parent=app).start()
    import_gil_holding_extensions()
    window = create_window(args.model)
    window.show()
    if os.environ.get("KBERT_GUI_REPORT_STARTUP"):
        _report_startup(window, launched)
    # Keras imports in the inference pool while the window paints; the model loads
    # and predicts after it, on the same serial pool.
    window.context.load_environment()
    return app.exec()


def _report_startup(window, launched):
    """For benchmarks/gui_startup.py: seconds from launch to the window and to the
    "Masked words" tab's first prediction, printed as they happen, with the CPU seconds the
    process has used by then (all threads: a figure less sensitive to other load)."""

    def report(what):
        print(
            f"{what} after {time.perf_counter() - launched:.3f} s "
            f"(cpu {time.process_time():.3f} s)",
            flush=True,
        )

    report("window shown")
    masked_words = window.tab(TabKey.MASKED_WORDS)

    def first_prediction(_outcome):
        report("first prediction")
        masked_words.controller.runner.result.disconnect(first_prediction)

    masked_words.controller.runner.result.connect(first_prediction)


def main(argv=None):
    """The `kbert-gui` entry point."""
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
