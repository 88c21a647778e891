"""The whole app: the tab each model opens in, every tab at 800 pixels, the command and
its start-up (no display, JAX's compiled programs kept, GIL-holding imports first)."""

import os
import pathlib
import subprocess
import sys

import pytest
from fine_tuning_helpers import SMALL_MODEL
from gui_helpers import layout_problems
from gui_helpers import make_context
from gui_helpers import open_window_at_minimum_size
from gui_helpers import stop_context

from kbert_gui.app import create_window
from kbert_gui.tab_key import TabKey
from kbert_gui.window.main_window import DEFAULT_SIZE

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def task_presets(tmp_path_factory):
    """A classifier and a QA model saved from a tiny backbone (heads untrained)."""
    from fine_tuning_data import make_tiny_preset

    from kbert.models import BertClassifier
    from kbert.models import BertQuestionAnswerer

    folder = tmp_path_factory.mktemp("gui_window")
    backbone = make_tiny_preset(folder / "preset", **SMALL_MODEL)
    classifier = folder / "runs" / "sentiment" / "model"
    BertClassifier.from_preset(backbone, label_names=["neg", "pos"]).save_to_preset(classifier)
    qa = folder / "runs" / "squad" / "model"
    BertQuestionAnswerer.from_preset(backbone).save_to_preset(qa)
    return {"backbone": backbone, "classifier": classifier, "qa": qa}


def test_opening_a_model_shows_the_tab_that_uses_it(qtbot, tmp_path, task_presets):
    window = create_window(context=make_context(tmp_path, str(task_presets["classifier"])))
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.current_tab_key() == TabKey.CLASSIFY, timeout=60_000)
    assert window.model_label.text() == "runs/sentiment (classifier: neg, pos)"

    def open_and_wait(source, tab_key):
        with qtbot.waitSignal(
            window.context.opener.described,
            timeout=60_000,
            check_params_cb=lambda description: description.source == str(source),
        ):
            window.open_model(source)
        assert window.current_tab_key() == tab_key
        assert window.context.models.recent_sources()[0] == str(source)

    open_and_wait(task_presets["qa"], TabKey.QUESTION_ANSWERING)
    assert window.model_label.text() == "runs/squad (question answering)"
    open_and_wait("demo", TabKey.MASKED_WORDS)
    # A base model opened from the fine-tuning tab stays there, to be fine-tuned...
    window.show_tab(TabKey.FINE_TUNING)
    open_and_wait(task_presets["backbone"], TabKey.FINE_TUNING)
    # ... a fine-tuned one goes to its tab.
    open_and_wait(task_presets["classifier"], TabKey.CLASSIFY)
    stop_context(window.context)


def test_every_tab_fits_a_window_800_pixels_wide(qtbot, tmp_path):
    window = create_window(context=make_context(tmp_path))
    qtbot.addWidget(window)
    window.resize(800, 600)
    window.show()
    qtbot.waitExposed(window)
    # A long model name is cut short in the model bar rather than widening the window.
    window.model_label.setText("runs/" + "very-long-run-name-" * 12 + " (classifier: a, b)")
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        assert window.minimumSizeHint().width() <= 800, window.tabs.tabText(index)
        assert window.width() == 800
    stop_context(window.context)


def test_at_its_minimum_size_no_widget_of_any_tab_overlaps_another(qtbot, tmp_path):
    window = open_window_at_minimum_size(qtbot, tmp_path)
    # The model bar while a model loads: the busy indicator beside the name, not over it.
    window.loading_indicator.show()
    fine_tuning = window.tab(TabKey.FINE_TUNING)
    fine_tuning.pages.setCurrentIndex(1)
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        qtbot.wait(10)
        assert layout_problems(window) == [], window.tabs.tabText(index)
    # The chart keeps room for its widest tick labels (loss in steps of 0.0025).
    chart = fine_tuning.chart
    for step in range(1, 41):
        chart.add_loss_point(step, 0.011 - step * 0.0002)
    chart.add_metric_point(40, 87.5)
    plot = chart.plot_rect()
    loss_labels, metric_labels = chart.tick_labels()
    assert "0.0025" in loss_labels and "100" in metric_labels
    widest = max(chart.fontMetrics().horizontalAdvance(label) for label in loss_labels)
    assert plot.left() >= widest + 6 and plot.height() >= 60
    widest = max(chart.fontMetrics().horizontalAdvance(label) for label in metric_labels)
    assert chart.width() - plot.right() >= widest + 6
    stop_context(window.context)


def test_table_columns_fit_at_the_default_size_or_wrap_with_the_full_text_on_hover(
    qtbot, tmp_path
):
    from PySide6.QtCore import Qt

    from kbert.inference.results import AnswerSpan

    window = create_window(context=make_context(tmp_path))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.size().toTuple() == DEFAULT_SIZE
    # The evaluation table: every column in view, Macro F1 with its whole title.
    fine_tuning = window.tab(TabKey.FINE_TUNING)
    window.show_tab(TabKey.FINE_TUNING)
    fine_tuning.pages.setCurrentIndex(1)
    rows = [
        {"epoch": epoch, "loss": 0.5, "learning_rate": 2e-5, "accuracy": 0.7, "macro_f1": 0.65}
        for epoch in (1, 2)
    ]
    fine_tuning.evaluation_model.set_rows(rows)
    view = fine_tuning.evaluation_view
    header = view.horizontalHeader()
    qtbot.waitUntil(lambda: header.sectionSize(0) > 0)
    widths = [header.sectionSize(column) for column in range(header.count())]
    assert sum(widths) <= view.viewport().width()
    titles = [view.model().headerData(column, Qt.Orientation.Horizontal) for column in range(5)]
    assert titles[-1] == "Macro F1"
    assert widths[-1] >= header.fontMetrics().horizontalAdvance("Macro F1") + 8
    for column, title in enumerate(titles):
        role = Qt.ItemDataRole.ToolTipRole
        assert view.model().headerData(column, Qt.Orientation.Horizontal, role) == title

    # The answers: a long answer wraps in its column, whole, and its tooltip holds it.
    qa = window.tab(TabKey.QUESTION_ANSWERING)
    window.show_tab(TabKey.QUESTION_ANSWERING)
    text = "the Norman conquest of England by William the Conqueror in 1066"
    qa.answers_model.set_answers([AnswerSpan(text, 10, 10 + len(text), 12.5, 0.4, 0.5, 0.4, 0)])
    view = qa.answers_view
    index = view.model().index(0, 0)
    qtbot.waitUntil(lambda: view.visualRect(index).width() > 0)
    cell = view.visualRect(index).adjusted(3, 0, -3, 0)
    needed = view.fontMetrics().boundingRect(cell, int(Qt.TextFlag.TextWordWrap), text)
    assert needed.height() <= view.visualRect(index).height()
    assert needed.height() > view.fontMetrics().height()  # it did need more than a line
    assert text in view.model().data(index, Qt.ItemDataRole.ToolTipRole)
    stop_context(window.context)


def test_every_file_dialog_opens_in_the_last_folder_kept_in_the_settings(
    qtbot, tmp_path, monkeypatch
):
    from PySide6.QtWidgets import QFileDialog

    from kbert_gui.window.open_model_dialog import OpenModelDialog

    context = make_context(tmp_path)
    folders = {}
    for kind in ("models", "data", "runs", "passages"):
        folders[kind] = tmp_path / "last" / kind
        folders[kind].mkdir(parents=True)
        context.settings.setValue(f"folders/{kind}", str(folders[kind]))
    window = create_window(context=context)
    qtbot.addWidget(window)
    started = []

    def dialog(answer):
        return lambda parent, title, start, *rest: started.append(start) or answer

    monkeypatch.setattr(QFileDialog, "getOpenFileName", dialog(("", "")))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", dialog(""))
    fine_tuning = window.tab(TabKey.FINE_TUNING)
    buttons = [
        window.tab(TabKey.MASKED_WORDS).comparison_pane.folder_button,
        fine_tuning.train_browse_button,
        fine_tuning.eval_browse_button,
        fine_tuning.output_browse_button,
        window.tab(TabKey.QUESTION_ANSWERING).open_file_button,
    ]
    for button in buttons:
        button.click()
    # File ▸ Open model…: its dialog's Folder… and File… buttons.
    window.open_action.trigger()
    (dialog,) = window.findChildren(OpenModelDialog)
    dialog.folder_button.click()
    dialog.file_button.click()
    kinds = ["models", "data", "data", "runs", "passages", "models", "models"]
    assert started == [str(folders[kind]) for kind in kinds]
    stop_context(window.context)


def test_without_a_display_the_app_says_so_and_exits_1():
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    environment["PYTHONPATH"] = os.pathsep.join(sys.path)
    result = subprocess.run(
        [sys.executable, "-m", "kbert_gui"],
        cwd=REPOSITORY,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "no display found" in result.stderr
    assert "xvfb-run -a kbert gui" in result.stderr
    assert "QT_QPA_PLATFORM=offscreen" in result.stderr
    assert "core dumped" not in result.stderr and "Aborted" not in result.stderr


@pytest.mark.skipif(
    os.environ.get("KERAS_BACKEND", "jax") != "jax", reason="JAX's compilation cache"
)
def test_the_app_keeps_jax_programs_on_disk_as_the_command_does(tmp_path):
    environment = {
        key: value for key, value in os.environ.items() if key != "JAX_COMPILATION_CACHE_DIR"
    }
    environment.update(
        KBERT_CACHE=str(tmp_path / "cache"),
        KBERT_GUI_REPORT_STARTUP="1",
        QT_QPA_PLATFORM="offscreen",
        PYTHONPATH=os.pathsep.join(sys.path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "kbert_gui"],
        cwd=REPOSITORY,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith("first prediction after"):
                break
    finally:
        process.kill()
        process.wait()
    assert lines[0].startswith("window shown after") and "(cpu " in lines[0]
    assert lines[-1].startswith("first prediction after")
    assert any((tmp_path / "cache" / "jax-compilation-cache").iterdir())


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


def test_python_m_kbert_gui_never_imports_kbert_from_the_working_directory(tmp_path):
    # The parent of a clone: a `kbert` folder that is no package of the app's.
    stray = tmp_path / "kbert"
    stray.mkdir()
    (stray / "__init__.py").write_text("raise SystemExit('the stray kbert was imported')\n")
    here = subprocess.run(
        [sys.executable, "-c", "import kbert"], cwd=tmp_path, capture_output=True, text=True
    )
    assert "the stray kbert was imported" in here.stderr  # what the app must not do
    result = subprocess.run(
        [sys.executable, "-m", "kbert_gui", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: kbert gui")


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


def _without_pyside6(code):
    """Runs `code` in a Python where PySide6 cannot be imported, as without kbert[gui]."""
    blocker = "import sys\nsys.modules['PySide6'] = None\nsys.modules['shiboken6'] = None\n"
    return subprocess.run(
        [sys.executable, "-c", blocker + code],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "command",
    [
        "import kbert.cli\nsys.exit(kbert.cli.main(['gui']))",  # kbert gui
        "import kbert_gui.app\nsys.exit(kbert_gui.app.main([]))",  # kbert-gui
    ],
    ids=["kbert gui", "kbert-gui"],
)
def test_without_pyside6_the_app_says_how_to_install_it_and_exits_1(command):
    result = _without_pyside6(command)
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert result.stderr.splitlines() == [
        "kbert gui: error: the desktop app needs PySide6, which is not installed: "
        'pip install "kbert-keras[gui]"'
    ]
    # The library and the command's help need no PySide6.
    help_text = _without_pyside6("import kbert.cli\nkbert.cli.main(['gui', '--help'])")
    assert help_text.returncode == 0 and "--model MODEL" in help_text.stdout
