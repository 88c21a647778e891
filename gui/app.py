"""`kbert gui` / `kbert-gui`: starts the desktop app.

The window appears first; Keras, the backend and the model load afterwards in a
worker, behind a status line, so the window is up within a couple of seconds even on
a small machine. Only PySide6 and the standard library are imported before `show()`.
"""

import argparse
import os
import sys
import time

from kbert.commands import MODEL_HELP
from kbert_gui import DEFAULT_PRESET

APP_NAME = "kbert"


def build_parser():
    parser = argparse.ArgumentParser(
        prog="kbert gui",
        description="kbert's desktop app: masked-word explorer, question answering, fine-tuning.",
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
    from kbert_gui.app_context import AppContext
    from kbert_gui.classify_tab import ClassifyTab
    from kbert_gui.explorer_tab import ExplorerTab
    from kbert_gui.fine_tuning_tab import FineTuningTab
    from kbert_gui.main_window import MainWindow
    from kbert_gui.model_store import ModelStore
    from kbert_gui.question_answering_tab import QuestionAnsweringTab

    context = context if context is not None else AppContext(ModelStore(model))
    tabs = [
        ("explorer", ExplorerTab(context)),
        ("qa", QuestionAnsweringTab(context)),
        ("classify", ClassifyTab(context)),
        ("fine-tuning", FineTuningTab(context)),
    ]
    window = MainWindow(context, tabs)
    context.setParent(window)
    return window


def run(args):
    """Starts the app with parsed `args`; returns its exit status."""
    launched = time.perf_counter()
    if args.backend:
        os.environ["KERAS_BACKEND"] = args.backend
    os.environ.setdefault("KERAS_BACKEND", "jax")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    window = create_window(args.model)
    window.show()
    if os.environ.get("KBERT_GUI_REPORT_STARTUP"):
        # For benchmarks/gui_startup.py: seconds from launch to a shown window.
        print(f"window shown after {time.perf_counter() - launched:.3f} s", flush=True)
    window.context.load_environment()
    return app.exec()


def main(argv=None):
    """The `kbert-gui` entry point."""
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
