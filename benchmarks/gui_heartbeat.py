"""How long the desktop app's window goes without handling events, during its heavy work.

A `QTimer` on the UI thread ticks every 20 ms; the longest gap between two ticks is
how long the window was frozen (a window that never stalls shows about 20 ms). The
issue asks for under 200 ms throughout. Four phases, as a user meets them, on the
bundled demo model (BERT-mini size) with real work in each:

- `model_load`: from a shown window to the first prediction of "Masked words" (Keras and the
  backend import, the model loads and compiles, all in workers);
- `long_passage_qa`: a question about a ~99,000-character passage with "Shade
  start/end probabilities" on, then a click on each of five n-best rows;
- `fine_tuning`: fine-tuning the demo model for 3 epochs on a small labelled file.
- `evaluation_browser`: File > Evaluate… on 10,000 labelled texts (the fine-tuned model
  of the phase before, else a classifier head on the demo backbone): predictions in a
  worker, the browser opened, then sorted by probability, a confusion-matrix cell
  clicked, errors only, every row again.

Each phase also reports its longest garbage-collector pass per generation (passes run
on the UI thread, `kbert_gui.services.main_thread_garbage_collector`); `full_collection_ms` is
one full pass timed at the end, with all of the above loaded.

    python benchmarks/gui_heartbeat.py [--output gui_heartbeat.json]
        [--phases fine_tuning ...]

To find what froze the window, sample which thread holds the GIL (py-spy, from PyPI):
`py-spy record --gil --threads --nonblocking -r 200 -f raw -o stalls.txt -- python
benchmarks/gui_heartbeat.py --phases fine_tuning`; a worker stack with as many
samples as the gap is long (200 per second) is the call that held the GIL. That is
how TensorFlow's import under `keras.utils.set_random_seed` and the collector's
passes over the Keras heap were found.

Uses the offscreen Qt platform unless QT_QPA_PLATFORM is set (e.g. under xvfb-run).
The machine's load average is printed beside the figures: on a shared machine a gap
may be a wait for a core rather than the app's own work.
"""

import argparse
import gc
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

INTERVAL_MS = 20
SENTENCE = (
    "Elizabeth walked to Netherfield through the wet fields, and her petticoat was six "
    "inches deep in mud when she arrived at the house of Mr. Bingley. "
)
QUESTION = "Where did Elizabeth walk?"
EVALUATION_EXAMPLES = 10_000
ROWS = [("She danced every dance at the ball.", "ball"), ("She read the letter twice.", "letter")]


class Heartbeat:
    """Records every gap between the ticks of a UI-thread timer while started.

    It also times every garbage-collector pass meanwhile, by generation.
    """

    def __init__(self, interval_ms=INTERVAL_MS):
        from PySide6.QtCore import QTimer

        self.gaps_ms = []
        self._last = None
        self._timer = QTimer()
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self.collections_ms = {0: [], 1: [], 2: []}  # the collector's passes, by generation
        self._collection_started = None

    def start(self):
        self._last = time.perf_counter()
        gc.callbacks.append(self._on_collection)
        self._timer.start()

    def stop(self):
        self._timer.stop()
        self._tick()
        gc.callbacks.remove(self._on_collection)

    def _tick(self):
        now = time.perf_counter()
        self.gaps_ms.append((now - self._last) * 1000)
        self._last = now

    def _on_collection(self, phase, info):
        if phase == "start":
            self._collection_started = time.perf_counter()
        elif self._collection_started is not None:
            elapsed = (time.perf_counter() - self._collection_started) * 1000
            self.collections_ms[info["generation"]].append(elapsed)

    def summary(self, seconds):
        gaps = sorted(self.gaps_ms)
        return {
            "seconds": round(seconds, 2),
            "ticks": len(gaps),
            "max_gap_ms": round(gaps[-1], 1),
            "p99_gap_ms": round(gaps[int(0.99 * (len(gaps) - 1))], 1),
            "median_gap_ms": round(statistics.median(gaps), 1),
            "longest_collection_ms": {
                generation: round(max(passes, default=0.0), 1)
                for generation, passes in self.collections_ms.items()
            },
        }


def wait_until(app, predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"Timed out after {timeout_s} s waiting for {what}.")
        app.processEvents()
        time.sleep(0.005)


def measure(app, name, work, results):
    heartbeat = Heartbeat()
    started = time.perf_counter()
    heartbeat.start()
    work()
    heartbeat.stop()
    results[name] = heartbeat.summary(time.perf_counter() - started)
    print(f"{name:>16}: {json.dumps(results[name])}", flush=True)


def evaluation_request(model, folder):
    """The `EvaluationRequest` of the `evaluation_browser` phase (its files made now)."""
    from kbert_gui.services.evaluation_request import EvaluationRequest

    data = folder / "evaluate.csv"
    lines = [
        f'"{ROWS[index % 2][0]} {index}",{ROWS[index % 2][1]}\n'
        for index in range(EVALUATION_EXAMPLES)
    ]
    data.write_text("text,label\n" + "".join(lines), encoding="utf-8")
    classifier = folder / "run" / "model"
    if not classifier.is_dir():
        from kbert.models import BertBackbone
        from kbert.models import BertClassifier
        from kbert.tokenizer import BertTokenizer

        classifier = folder / "classifier"
        backbone = BertBackbone.from_preset(model)
        labels = sorted({label for _, label in ROWS})
        BertClassifier(backbone, label_names=labels).save_to_preset(
            classifier, BertTokenizer.from_preset(model)
        )
        del backbone
    # The set-up's own objects (a model built here, on the UI thread) out of the young
    # generations, so the phase's collector passes look at the phase's objects only.
    gc.collect()
    return EvaluationRequest(str(classifier), "classification", str(data))


def browse(app, window, request):
    """The `evaluation_browser` phase: evaluate, open the browser, sort and filter."""
    from PySide6.QtCore import Qt

    opened, failed = [], []
    window.evaluation.browser_opened.connect(opened.append)
    window.evaluation.failed.connect(failed.append)
    window.evaluation.evaluate(request)
    wait_until(app, lambda: opened or failed, 900, "the evaluation")
    if failed:
        raise RuntimeError(f"The evaluation failed: {failed[0]}")
    browser = opened[0]
    steps = (
        # As a click on the title does (`sortByColumn` would sort twice).
        lambda: browser.table.horizontalHeader().setSortIndicator(
            browser.rows_model.keys.index("probability"), Qt.SortOrder.DescendingOrder
        ),
        lambda: browser.show_pair(browser.matrix_model.index(0, 1)),
        lambda: browser.filter_bar.errors_only.setChecked(True),
        browser.filter_bar.clear,
    )
    for step in steps:
        step()
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.005)
    browser.close()


def load_model(app, window, context, folder, model):
    """The phase `model_load`: Keras and the model load, the first predictions appear."""
    from kbert_gui.tab_key import TabKey

    context.load_environment()
    masked_words = window.tab(TabKey.MASKED_WORDS)
    wait_until(app, lambda: masked_words.predictions_view.mask_count() > 0, 300, "predictions")


def answer_on_a_long_passage(app, window, context, folder, model):
    """The phase `long_passage_qa`: 99,000 characters answered, then answers clicked."""
    from kbert_gui.tab_key import TabKey

    window.show_tab(TabKey.QUESTION_ANSWERING)
    qa = window.tab(TabKey.QUESTION_ANSWERING)
    qa.passage_view.set_passage(SENTENCE * (99_000 // len(SENTENCE)))
    qa.question_edit.setText(QUESTION)
    qa.shade_check.setChecked(True)
    qa.top_k_spin.setValue(5)
    qa.answer_now()
    wait_until(app, lambda: qa.answers_view.model().rowCount() >= 5, 600, "answers")
    for row in (3, 1, 4, 2, 0):
        qa.answers_view.selectRow(row)
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.005)


def fine_tune(app, window, context, folder, model):
    """The phase `fine_tuning`: a small classifier trained from the Fine-tuning tab."""
    from kbert_gui.tab_key import TabKey

    window.show_tab(TabKey.FINE_TUNING)
    tuning = window.tab(TabKey.FINE_TUNING)
    data = folder / "train.csv"
    lines = [f'"{text} {index}",{label}\n' for index in range(16) for text, label in ROWS]
    data.write_text("text,label\n" + "".join(lines), encoding="utf-8")
    wait_until(app, lambda: tuning.hyperparameters.is_ready, 120, "the form")
    tuning.set_task("classification")
    tuning.set_training_file(str(data))
    tuning.set_evaluation_file(str(data))
    tuning.set_output_folder(str(folder / "run"))
    wait_until(app, lambda: tuning.column_form.mapping() is not None, 60, "the preview")
    tuning.hyperparameters.set_values(epochs=3, batch_size=8, learning_rate=1e-3)
    finished = []
    tuning.run_finished.connect(finished.append)
    tuning.start()
    wait_until(app, lambda: finished or tuning.error_banner.message, 900, "fine-tuning")
    if finished != ["completed"]:
        raise RuntimeError(f"Fine-tuning ended with {finished}: {tuning.error_banner.message}")


def browse_evaluation(app, window, context, folder, model):
    """The phase `evaluation_browser`: an evaluation opened and browsed."""
    browse(app, window, evaluation_request(model, folder))


# Each phase's work, in the order measured; the model always loads first.
PHASE_WORK = {
    "model_load": load_model,
    "long_passage_qa": answer_on_a_long_passage,
    "fine_tuning": fine_tune,
    "evaluation_browser": browse_evaluation,
}


def run_phases(app, phases, model):
    """Shows the window and measures `phases` (model_load first); the figures as a dict."""
    from PySide6.QtCore import QSettings

    from kbert_gui.app import create_window
    from kbert_gui.services.app_context import AppContext
    from kbert_gui.services.model_store import ModelStore

    results = {"load_average": [round(value, 2) for value in os.getloadavg()]}
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        settings = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
        context = AppContext(ModelStore(model, settings=settings, cache_dir=folder))
        # The window is built and shown first (before it is shown there is nothing to
        # freeze); the phase starts where the app's `run` goes on: loading Keras.
        window = create_window(model, context=context)
        window.resize(1280, 820)
        window.show()
        app.processEvents()
        for name, work in PHASE_WORK.items():
            if name == "model_load" or name in phases:
                measure(app, name, lambda: work(app, window, context, folder, model), results)
        context.stop_all(60_000)
        # A full pass is rare (after ten generation-1 passes): time one now, with
        # everything above loaded, as the collector would run it on the UI thread.
        started = time.perf_counter()
        gc.collect(2)
        results["full_collection_ms"] = round((time.perf_counter() - started) * 1000, 1)
        window.close()
    return results


PHASES = tuple(PHASE_WORK)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="demo")
    parser.add_argument("--output", help="also write the figures to this JSON file")
    parser.add_argument(
        "--phases", nargs="+", choices=PHASES, default=list(PHASES),
        help="the phases to measure (the model always loads first)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("KERAS_BACKEND", "jax")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    from PySide6.QtWidgets import QApplication

    from kbert_gui.app import import_gil_holding_extensions
    from kbert_gui.services.main_thread_garbage_collector import MainThreadGarbageCollector

    app = QApplication.instance() or QApplication(sys.argv[:1])
    MainThreadGarbageCollector(parent=app).start()
    import_gil_holding_extensions()  # as the app's `run` does
    results = run_phases(app, args.phases, args.model)
    results["worst_gap_ms"] = max(
        phase["max_gap_ms"] for phase in results.values() if isinstance(phase, dict)
    )
    print(json.dumps(results, indent=2))
    if args.output:
        pathlib.Path(args.output).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
